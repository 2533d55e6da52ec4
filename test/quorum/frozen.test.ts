// A quorum member that stops answering without closing its connection (a frozen process, a long GC
// pause, a black-holed network, a client queueing commands while it reconnects) must not hold up
// the others: every round settles as soon as a majority decided it, and each member is waited for
// a fraction of the lease at most.

import { Redis as IoRedis } from "ioredis";
import { describe, expect, it } from "vitest";
import { Lock, LockAcquisitionError, type QuorumSpec, quorum } from "../../src/index";
import { uniqueId } from "../support/redis";
import { useMembers } from "./support/members";

/** The ioredis options these tests vary. */
type ClientOptions = { commandTimeout?: number };

const members = useMembers();
const servers = () => members.servers();

/** A quorum of the first `size` servers, through fresh ioredis clients. */
function connect(size: number, options: ClientOptions): QuorumSpec {
  return quorum(members.connect(size, options));
}

/** Less than a third of a 30 s lease (what a frozen member may be waited for), by a wide margin. */
const NOT_WAITED_MS = 5_000;

/** A quorum of `size` with its last `frozen` members frozen, every connection warmed first. */
async function frozenQuorum(size: number, frozen: number, options: ClientOptions): Promise<QuorumSpec> {
  const redis = connect(size, options);
  // Warm every connection (and the script caches) before freezing anything.
  const warm = new Lock({ id: uniqueId("frozen-warm"), redis });
  expect(await warm.acquire()).toBe(true);
  expect(await warm.release()).toBe(true);
  for (const server of servers().slice(size - frozen, size)) server.freeze();
  return redis;
}

/** How long `work` took, in milliseconds, and what it returned. */
async function timed<T>(work: () => Promise<T>): Promise<{ value: T; ms: number }> {
  const started = performance.now();
  const value = await work();
  return { value, ms: performance.now() - started };
}

const setups = [
  { size: 3, frozen: 1 },
  { size: 5, frozen: 2 },
];
const clientKinds: [string, ClientOptions][] = [
  ["ioredis defaults (offline queue on, no command timeout)", {}],
  ["ioredis with a 200 ms command timeout", { commandTimeout: 200 }],
];

describe.each(setups)("a quorum of $size with $frozen member(s) frozen", ({ size, frozen }) => {
  describe.each(clientKinds)("%s", (_name, options) => {
    it("acquire, extend, status and release settle on the live majority, without waiting for the frozen", async () => {
      const redis = await frozenQuorum(size, frozen, options);
      // A 30 s lease: each member may be waited for 10 s. The live majority answers in a few ms; a
      // round that waited for a frozen member would take the whole 10 s. The bound between the two
      // leaves a loaded machine a thousand times the expected time, and still tells them apart.
      const id = uniqueId(`frozen-${size}`);
      const lock = new Lock({ id, redis, lease: 30_000 });
      const acquired = await timed(() => lock.acquire());
      expect(acquired.value).toBe(true);
      expect(acquired.ms).toBeLessThan(NOT_WAITED_MS);
      const extended = await timed(() => lock.extend(1_000));
      expect(extended.value).toBe(true);
      expect(extended.ms).toBeLessThan(NOT_WAITED_MS);
      const status = await timed(() => lock.getStatus());
      expect(status.value).toBe("ACQUIRED");
      expect(status.ms).toBeLessThan(NOT_WAITED_MS);

      // Another lock cannot take it meanwhile: the live majority holds this token.
      const other = new Lock({ id, redis, retry: { attempts: 1 } });
      expect(await other.acquire()).toBe(false);

      const released = await timed(() => lock.release());
      expect(released.value).toBe(true);
      expect(released.ms).toBeLessThan(NOT_WAITED_MS);
      expect(await other.acquire()).toBe(true);
      expect(await other.release()).toBe(true);
    }, 40_000);

    it("auto-extend keeps a short lease over several leases through the live majority", async () => {
      const redis = await frozenQuorum(size, frozen, options);
      // A 1.2 s lease renewed every 400 ms: each member is waited for 400 ms at most (200 ms is within
      // reach of a loaded machine's stalls).
      const lock = new Lock({
        id: uniqueId(`frozen-renew-${size}`),
        redis,
        lease: 1_200,
        autoExtend: { interval: 400 },
      });
      expect(await lock.acquire()).toBe(true);
      const signal = lock.signal;
      await new Promise((resolve) => setTimeout(resolve, 4_000)); // more than three leases
      expect(signal.aborted).toBe(false);
      expect(lock.remainingMs).toBeGreaterThan(0);
      expect(await lock.getStatus()).toBe("ACQUIRED");
      expect(await lock.release()).toBe(true);
    }, 20_000);

    it("a short lease given to one acquire bounds the wait for a frozen member too", async () => {
      const redis = connect(size, options);
      const id = uniqueId(`frozen-short-${size}`);
      const lock = new Lock({ id, redis, lease: 30_000 });
      expect(await lock.acquire()).toBe(true);
      expect(await lock.release()).toBe(true);
      // Freeze a majority: no decision without the frozen members, so each round waits for them.
      for (const server of servers().slice(0, frozen + 1)) server.freeze();
      const attempt = await timed(() =>
        lock.acquire({ lease: 1_500, retry: { attempts: 1 } }).catch(() => false),
      );
      expect(attempt.value).toBe(false);
      // A third of the call's 1.5 s lease for the try (500 ms; less with a command timeout); a third
      // of the lock's 30 s lease would be 10 s. The bound sits between, far from both.
      expect(attempt.ms).toBeLessThan(NOT_WAITED_MS);
    }, 20_000);
  });
});

// One member fails at once, another is frozen, the third says "held": no majority can form, and which of
// contention or an outage it is depends on the frozen member. Answering before it does would call an outage
// contention.
describe("a quorum of 3: another owner holds it, one member fails at once, one is frozen", () => {
  it("the acquisition fails as an outage naming both, not as contention", async () => {
    const id = uniqueId("quorum-mixed-down");
    const other = new Lock({ id, redis: connect(3, {}), lease: 30_000 });
    expect(await other.acquire()).toBe(true);
    const [live, , frozen] = members.connect(3, {});
    // Nothing listens on port 1; without an offline queue each command fails at once.
    const failing = new IoRedis(1, "127.0.0.1", { lazyConnect: true, enableOfflineQueue: false });
    failing.on("error", () => {});
    try {
      const lock = new Lock({ id, redis: quorum([live, failing, frozen] as IoRedis[]), lease: 1_500 });
      // Warms the connections: two members answer that the other owner holds it.
      expect(await lock.acquire({ retry: { attempts: 1 } })).toBe(false);
      servers()[2]?.freeze();
      const failure = await lock.acquireOrThrow({ retry: { attempts: 1 } }).catch((error: unknown) => error);
      expect(failure).toBeInstanceOf(LockAcquisitionError);
      expect(failure).toMatchObject({ reason: "redis-error" });
      const named = (failure as LockAcquisitionError).instances?.map(({ instance }) => instance);
      expect(named).toEqual([1, 2]);
    } finally {
      failing.disconnect();
    }
  }, 20_000);
});
