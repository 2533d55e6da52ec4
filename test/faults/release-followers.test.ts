// Review helper-170 (stop 54): f407518 held a release's news back from the older leases of its uuid until
// the release was sent, after a same-uuid try in flight. A try that found the hold gone then handed them on
// untold (E: 24/24), and a "FREE" answer read meanwhile dropped them (D3: 12/12): misses worse than the
// false loss the delay was for. A release tells them as it begins; D, D2 and the controls held before too.
import { describe, expect, it } from "vitest";
import type { Lock, RedisClient } from "../../src/index";
import { useBothClients } from "./support/both-clients";
import { useWire } from "./support/endpoints";
import {
  clientNames,
  type LockKind,
  lockKinds,
  type SharedUuidCase,
  sharedUuidCase,
} from "./support/shared-uuid";
import { pause, within } from "./support/time";

const both = useBothClients();
const { ioredis, clients } = both;
const wire = useWire(() => both.stack().endpoint);

/**
 * L1 (its losses told as "L1"), then L2 of the same uuid, which L1 follows; then the hold vanishes from Redis
 * unseen here (a restart without persistence), and, with `other`, another owner takes the lock.
 */
async function twoLeasesThenLost(
  Kind: LockKind,
  redis: RedisClient,
  { id, uuid, told }: SharedUuidCase,
  other?: Lock,
): Promise<{ lock: Lock; l1: AbortSignal }> {
  const lock = new Kind({ id, redis, lease: 5_000 });
  expect(await lock.acquire({ uuid, onLost: told("L1") })).toBe(true);
  const l1 = lock.signal;
  expect(await lock.acquire({ uuid })).toBe(true);
  await ioredis().del(id);
  if (other !== undefined) expect(await other.acquire()).toBe(true);
  return { lock, l1 };
}

/** After the dust settles: what L1 was told, and whether the key is another owner's, not the uuid's. */
async function toldWhileOtherHolds({ id, uuid, lost }: SharedUuidCase, l1: AbortSignal) {
  await pause(100);
  return { lost, aborted: l1.aborted, otherHolds: (await ioredis().get(id)) !== uuid };
}

describe.each(clientNames)("%s", (name) => {
  describe.each(lockKinds)("%s", (_kind, Kind) => {
    // D: the hold is lost to another owner. A try of the uuid is in flight as L2 is released: the try is
    // refused (another holder) and reports L2 lost, so L2's release finds itself not releasable and never
    // told L1. The lock is another owner's; L1 untold.
    // D2: as D, with a getStatus() of L2 in flight too: its "FREE" lands while L2's release waits for the try,
    // marks L2 gone, and the release, no longer releasable, returned without telling L1.
    it.each([
      ["D: refused try", false],
      ["D2: status answer and refused try", true],
    ])(
      "%s in flight at the release: the older plain lease is told",
      async (_case, withStatus) => {
        const shared = sharedUuidCase("release-followers");
        const other = new Kind({ id: shared.id, redis: clients[name](), lease: 5_000 });
        const { lock, l1 } = await twoLeasesThenLost(Kind, clients[name](), shared, other);
        const status = withStatus ? lock.getStatus() : Promise.resolve("FREE");
        const later = lock.acquire({ uuid: shared.uuid, retry: { attempts: 1 } });
        const released = lock.release();
        expect(await within(status, 5_000, "status")).toBe("FREE");
        expect(await within(later, 5_000, "later")).toBe(false);
        expect(await within(released, 5_000, "release")).toBe(false);
        const seen = await toldWhileOtherHolds(shared, l1);
        await other.release();
        expect(seen).toEqual({ lost: ["L1 taken"], aborted: true, otherHolds: true });
      },
      20_000,
    );

    // D0 (control): the same, with no release: the refused try tells L2 lost, and L1 with it.
    it("D0: control, no release", async () => {
      const shared = sharedUuidCase("release-followers");
      const other = new Kind({ id: shared.id, redis: clients[name](), lease: 5_000 });
      const { lock, l1 } = await twoLeasesThenLost(Kind, clients[name](), shared, other);
      expect(await within(lock.acquire({ uuid: shared.uuid, retry: { attempts: 1 } }), 5_000, "later")).toBe(
        false,
      );
      await pause(100);
      const seen = { lost: shared.lost, aborted: l1.aborted };
      await other.release();
      expect(seen).toEqual({ lost: ["L1 taken"], aborted: true });
    }, 20_000);

    // E: the hold vanishes and no one takes it. A try of the uuid in flight as L2 is released makes a new
    // hold (kept false): L2, released, handed L1 on to it untold, so L1 learnt nothing of its lost hold while
    // the new lease lived.
    it("E: try in flight at the release finds the hold gone: the older plain lease is told", async () => {
      const shared = sharedUuidCase("release-followers");
      const { lock, l1 } = await twoLeasesThenLost(Kind, clients[name](), shared);
      const later = lock.acquire({ uuid: shared.uuid });
      const released = lock.release();
      expect(await within(later, 5_000, "later")).toBe(true);
      expect(await within(released, 5_000, "release")).toBe(false);
      await pause(100);
      const seen = { lost: [...shared.lost], aborted: l1.aborted };
      await lock.release();
      expect(seen).toEqual({ lost: ["L1 taken"], aborted: true });
    }, 20_000);

    // E0 (control): the same with no release: L3's take finds L2's hold gone, L2 is lost, L1 with it.
    it("E0: control, no release", async () => {
      const shared = sharedUuidCase("release-followers");
      const { lock, l1 } = await twoLeasesThenLost(Kind, clients[name](), shared);
      expect(await within(lock.acquire({ uuid: shared.uuid }), 5_000, "later")).toBe(true);
      await pause(100);
      const seen = { lost: [...shared.lost], aborted: l1.aborted };
      await lock.release();
      expect(seen).toEqual({ lost: ["L1 taken"], aborted: true });
    }, 20_000);
  });
});

// D3 (upstash, through a wire): L2's getStatus() answers "FREE" (another owner holds) while L2's release
// waits for a same-uuid try in flight; the try, answered later, is refused. L1 was never told.
describe.each(lockKinds)("upstash wire %s", (_kind, Kind) => {
  it("D3: status FREE lands during the release's wait for a refused try: the older plain lease is told", async () => {
    const shared = sharedUuidCase("release-followers");
    const other = new Kind({ id: shared.id, redis: clients.upstash(), lease: 5_000 });
    const { lock, l1 } = await twoLeasesThenLost(Kind, wire().faulty, shared, other);
    const faults = wire().passThrough.faults;
    const before = wire().requests();
    faults.delayRepliesNext(1, 150); // the status
    const status = lock.getStatus();
    const deadline = Date.now() + 2_000;
    while (wire().requests() === before && Date.now() < deadline) await new Promise((r) => setImmediate(r));
    faults.delayRepliesNext(1, 600); // the try
    const later = lock.acquire({ uuid: shared.uuid, retry: { attempts: 1 } });
    const released = lock.release();
    expect(await within(status, 5_000, "status")).toBe("FREE");
    expect(await within(later, 5_000, "later")).toBe(false);
    const r = await within(released, 5_000, "release");
    const seen = { r, ...(await toldWhileOtherHolds(shared, l1)) };
    await other.release();
    expect(seen).toEqual({ r: false, lost: ["L1 taken"], aborted: true, otherHolds: true });
  }, 20_000);
});
