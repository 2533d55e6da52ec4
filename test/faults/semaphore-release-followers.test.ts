// Review helper-170 (stop 54, 12/12 and 6/6 on f407518): on a Semaphore, and on a Lock another owner held in
// between, a release waiting for a same-uuid try that found the permit gone handed the older lease on untold.
import { describe, expect, it } from "vitest";
import { Lock, Semaphore } from "../../src/index";
import { useBothClients } from "./support/both-clients";
import { clientNames, sharedUuidCase } from "./support/shared-uuid";
import { pause, within } from "./support/time";

const { ioredis, clients } = useBothClients();

async function dropPermits(id: string): Promise<number> {
  const keys = await ioredis().keys(`*${id}*`);
  const permits = keys.filter((k) => k.includes(":permit:"));
  if (permits.length > 0) await ioredis().del(...permits);
  return permits.length;
}

describe.each(clientNames)("%s", (name) => {
  describe.each([1, 3])("limit %i", (limit) => {
    it("E-sem: try in flight at L2's release finds the permit gone: L1 is told", async () => {
      const { id, uuid, lost, told } = sharedUuidCase("semaphore-release-followers");
      const sem = new Semaphore({ id, redis: clients[name](), limit, lease: 5_000 });
      const l1 = await sem.acquire({ uuid, onLost: told("L1") });
      expect(l1).toBeDefined();
      const l2 = await sem.acquire({ uuid });
      expect(l2).toBeDefined();
      expect(await dropPermits(id)).toBeGreaterThan(0);
      const later = sem.acquire({ uuid });
      const released = (l2 as NonNullable<typeof l2>).release();
      const l3 = await within(later, 5_000, "later");
      expect(l3).toBeDefined();
      const r = await within(released, 5_000, "release");
      await pause(100);
      const seen = { r, lost: [...lost], aborted: l1?.signal.aborted };
      await l3?.release();
      expect(seen).toEqual({ r: false, lost: ["L1 taken"], aborted: true });
    }, 20_000);

    it("E-sem0: control, no release", async () => {
      const { id, uuid, lost, told } = sharedUuidCase("semaphore-release-followers");
      const sem = new Semaphore({ id, redis: clients[name](), limit, lease: 5_000 });
      const l1 = await sem.acquire({ uuid, onLost: told("L1") });
      const l2 = await sem.acquire({ uuid });
      expect(l2).toBeDefined();
      expect(await dropPermits(id)).toBeGreaterThan(0);
      const l3 = await within(sem.acquire({ uuid }), 5_000, "later");
      expect(l3).toBeDefined();
      await pause(100);
      const seen = { lost: [...lost], aborted: l1?.signal.aborted };
      await l3?.release();
      expect(seen).toEqual({ lost: ["L1 taken"], aborted: true });
    }, 20_000);
  });

  // E2 (Lock): another owner held and released the lock between the deletion and the take: no doubt a loss.
  it("E2-lock: another owner held in between; the try in flight at L2's release: L1 is told", async () => {
    const { id, uuid, lost, told } = sharedUuidCase("semaphore-release-followers");
    const lock = new Lock({ id, redis: clients[name](), lease: 5_000, autoExtend: true } as never);
    const other = new Lock({ id, redis: clients[name](), lease: 5_000 });
    expect(await lock.acquire({ uuid, onLost: told("L1") })).toBe(true);
    const l1 = lock.signal;
    expect(await lock.acquire({ uuid })).toBe(true);
    await ioredis().del(id);
    expect(await other.acquire()).toBe(true);
    expect(await other.release()).toBe(true);
    const later = lock.acquire({ uuid });
    const released = lock.release();
    expect(await within(later, 5_000, "later")).toBe(true);
    expect(await within(released, 5_000, "release")).toBe(false);
    await pause(1_000);
    const seen = { lost: [...lost], aborted: l1.aborted, key: await ioredis().get(id) };
    await lock.release();
    expect(seen).toEqual({ lost: ["L1 taken"], aborted: true, key: uuid });
  }, 20_000);
});
