// One uuid, one hold, on a quorum over HTTP (third review of 2026-12-01). A release's vote settles at a
// majority; a member whose release was slow then got the same-uuid try first, and its late release deleted
// that try's grant, leaving the new hold on a bare majority. And a lease's release freed, on each member,
// the first permit holding its uuid, which may be another lease's: limit + 1 holders.
import { describe, expect, it, vi } from "vitest";
import { Lock, quorum, Semaphore } from "../../src/index";
import { waitUntil } from "../faults/support/time";
import { uniqueId } from "../support/redis";
import { useHttpMembers } from "./support/members";

const members = useHttpMembers(3);
const faulty = () => quorum(members().map((member) => member.faulty));
const direct = () => quorum(members().map((member) => member.direct));

/**
 * Waits until every request that reached a member's pass-through ran in its Redis (`answered`: and its answer,
 * held back or not, went out): what a fixed pause only assumed, however late a loaded machine forwards it.
 */
async function allRan(what: string, answered = false): Promise<void> {
  await waitUntil(
    () =>
      members().every(
        ({ passThrough }) =>
          passThrough.ran() >= passThrough.stats.requests &&
          (!answered || passThrough.stats.responses >= passThrough.stats.requests),
      ),
    what,
    { timeoutMs: 10_000 },
  );
}

/** How many of `id`'s keys hold `token`, per member. */
async function holding(id: string, token: string): Promise<number[]> {
  return Promise.all(
    members().map(async ({ direct }) => {
      const keys = await direct.keys(`*${id}*`);
      const values = await Promise.all(keys.map((key) => direct.get(key).catch(() => null)));
      return values.filter((value) => value === token).length;
    }),
  );
}

describe("quorum: a release slow on one member, and a same-uuid acquisition on the instance", () => {
  it.each([
    ["Lock", (id: string) => new Lock({ id, redis: faulty(), lease: 10_000 })],
    ["Semaphore", (id: string) => new Semaphore({ id, redis: faulty(), limit: 1, lease: 10_000 })],
  ] as const)("%s: the new hold stays on every member", async (_name, make) => {
    const id = uniqueId("quorum-late-member-release");
    const uuid = crypto.randomUUID();
    const made = make(id);
    // A wait for this instance's release in flight spends an attempt per retry delay: on a loaded
    // machine the release may outlast the default three.
    const retry = { attempts: 50, delay: 100 };
    const acquire = async () => {
      if (made instanceof Lock) return (await made.acquire({ uuid, retry })) ? made : undefined;
      return made.acquire({ uuid, retry });
    };
    const first = await acquire();
    members()[2]?.passThrough.faults.delayNext(1, 800);
    const releasing = first?.release();
    const second = await acquire();
    expect(await releasing).toBe(true);
    expect(second).toBeDefined();
    // The slow member's release has landed (before it did, a check would find the grant it deletes), then its take.
    await allRan("the slow release and the take", true);
    await made.pending;
    await allRan("the instance's work in the background", true);
    expect(await holding(id, uuid)).toEqual([1, 1, 1]);
    expect(await second?.release()).toBe(true);
    expect(await holding(id, uuid)).toEqual([0, 0, 0]);
  });
});

describe("quorum Semaphore: two leases of one uuid on two permits", () => {
  it("each release frees its own permit, so no more holders than the limit form", async () => {
    const id = uniqueId("quorum-own-permit");
    const permitKey = (n: number) => `{${id}}:permit:${n}`;
    const uuid = crypto.randomUUID();
    const [m0, , m2] = members();
    // Minority leftovers (a failed round not yet undone, a release slow on one member):
    await m0?.direct.set(permitKey(1), "stale-a", { px: 10_000 });
    await m2?.direct.set(permitKey(2), "stale-b", { px: 2_500 }); // outlives t1's try, by seconds
    const semaphore = new Semaphore({ id, redis: faulty(), limit: 2, lease: 10_000 });
    const random = vi.spyOn(Math, "random");
    try {
      random.mockReturnValue(0.99); // rounds start at permit 2: granted by members 0 and 1
      const a = await semaphore.acquireOrThrow({ uuid });
      random.mockReturnValue(0); // at permit 1: granted by members 1 and 2
      const b = await semaphore.acquireOrThrow({ uuid });
      random.mockRestore();
      expect(await a.release()).toBe(true);
      const others = new Semaphore({ id, redis: direct(), limit: 2, lease: 10_000 });
      const t1 = await others.acquire({ retry: { attempts: 1 } });
      // The case needs stale-b still there when t1 tried.
      expect(await m2?.direct.pttl(permitKey(2))).toBeGreaterThan(0);
      await waitUntil(async () => (await m2?.direct.exists(permitKey(2))) === 0, "stale-b expired");
      const t2 = await others.acquire({ retry: { attempts: 1 } });
      const believing = [!b.signal.aborted && b.remainingMs > 0, t1 !== undefined, t2 !== undefined];
      expect(believing.filter(Boolean)).toHaveLength(2);
      await Promise.all([b.release(), t1?.release(), t2?.release()]);
    } finally {
      random.mockRestore();
      await Promise.all(members().map((member) => member.direct.del(permitKey(1), permitKey(2))));
    }
  });
});

// Fifth review of 2026-12-01: a lease's status, extend and renewal found "its" permit by a scan of every
// permit on each member, so a stray key of its uuid on another permit (a failed round's leftover) counted
// as holding: the lease stayed alive on a minority while another token took its permit on a majority.
describe("quorum Semaphore: a lease whose permit is gone on a majority, a stray key of its uuid elsewhere", () => {
  it("is told it no longer holds, and renews nothing", async () => {
    const id = uniqueId("quorum-stray-permit");
    const uuid = crypto.randomUUID();
    const semaphore = new Semaphore({ id, redis: faulty(), limit: 2, lease: 10_000 });
    const lease = await semaphore.acquireOrThrow({ uuid });
    const [m0, m1, m2] = members();
    const mine = (await m1?.direct.keys(`*${id}*permit*`)) ?? [];
    const held = (
      await Promise.all(mine.map(async (key) => ((await m1?.direct.get(key)) === uuid ? key : "")))
    ).find(Boolean) as string;
    const other = held.endsWith(":1") ? held.replace(/:1$/, ":2") : held.replace(/:2$/, ":1");
    await m0?.direct.del(held); // lost on members 0 and 2 (a restart without persistence, say)
    await m2?.direct.del(held);
    await m2?.direct.set(other, uuid, { px: 10_000 }); // a stray key of the uuid on the other permit
    expect(await lease.getStatus()).toBe("FREE");
    expect(lease.signal.aborted).toBe(true);
    await semaphore.pending;
    await Promise.all(members().map((member) => member.direct.del(held, other)));
  });
});

// A status check of a uuid seeded elsewhere confirms the hold it finds (no undo of an abandoned try frees it
// then). Review of 2026-12-02: on a quorum it confirmed the members that held even when the vote answered
// FREE, so a same-uuid round failing at that moment was not undone there: the member stayed held a lease.
describe.each([
  [
    "Lock",
    (id: string) => new Lock({ id, redis: faulty(), lease: 10_000 }),
    (id: string, uuid: string) => new Lock({ id, redis: direct(), uuid }),
    async (id: string) => {
      await Promise.all(members().map((member) => member.direct.del(id)));
    },
  ],
  [
    "Semaphore",
    (id: string) => new Semaphore({ id, redis: faulty(), limit: 1, lease: 10_000 }),
    (id: string, uuid: string) => new Semaphore({ id, redis: direct(), limit: 1 }).permit(uuid),
    async (id: string) => {
      await Promise.all(members().map((member) => member.direct.del(`{${id}}:permit:1`)));
    },
  ],
])(
  "quorum %s: a seeded uuid's status check while a round of the uuid fails",
  (_name, make, seeded, clear) => {
    it("answering FREE, it confirms nothing: the failed round is undone on every member", async () => {
      const id = uniqueId("quorum-status-free");
      const uuid = crypto.randomUUID();
      const [m0, m1, m2] = members();
      // Another owner holds members 1 and 2, so the round fails; member 0 takes it, its answer held back.
      const other = make(id);
      await m1?.direct.set(id, "other", { px: 10_000 });
      await m1?.direct.set(`{${id}}:permit:1`, "other", { px: 10_000 });
      await m2?.direct.set(id, "other", { px: 10_000 });
      await m2?.direct.set(`{${id}}:permit:1`, "other", { px: 10_000 });
      m0?.passThrough.faults.delayRepliesNext(1, 2_000);
      const failed = await (other instanceof Lock
        ? other.acquire({ uuid, retry: { attempts: 1 } })
        : other.acquire({ uuid, retry: { attempts: 1 } }));
      expect(failed).toBeFalsy();
      await allRan("member 0's try");
      expect(await holding(id, uuid)).toEqual([1, 0, 0]); // landed on member 0, not yet undone
      expect(await seeded(id, uuid).getStatus()).toBe("FREE");
      await allRan("member 0's late answer", true);
      await other.pending; // the round's undo
      await allRan("the undo", true);
      expect(await holding(id, uuid)).toEqual([0, 0, 0]);
      await clear(id);
    });

    it("answering ACQUIRED, it confirms the hold: the late undo of a timed-out try leaves it", async () => {
      const id = uniqueId("quorum-status-held");
      const uuid = crypto.randomUUID();
      for (const member of members()) member.passThrough.faults.delayRepliesNext(1, 2_000);
      const abandoning = make(id);
      await expect(abandoning.acquire({ uuid, timeout: 100 })).rejects.toMatchObject({
        code: "LOCK_REDIS_ERROR",
      });
      await allRan("the abandoned tries");
      const holder = seeded(id, uuid);
      expect(await holder.getStatus()).toBe("ACQUIRED");
      // The late answers arrive, and the undo runs (before they did, [1, 1, 1] would hold whatever the undo does).
      await allRan("the late answers", true);
      await abandoning.pending;
      await allRan("the undo", true);
      expect(await holding(id, uuid)).toEqual([1, 1, 1]);
      expect(await holder.release()).toBe(true);
      expect(await holding(id, uuid)).toEqual([0, 0, 0]);
      await clear(id);
    });
  },
);
