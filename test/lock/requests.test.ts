import { Redis } from "@upstash/redis";
import { afterAll, beforeAll, describe, expect, inject, it, vi } from "vitest";
import { Debounce, Lock, LockAcquisitionError, LockRedisError, Semaphore } from "../../src/index";
import { within } from "../faults/support/time";
import { usePrivateStack } from "../stack/helpers/private-stack";
import { type PassThrough, startPassThrough } from "../support/pass-through";
import { newRedis, uniqueId } from "../support/redis";

// These tests watch the wire: a pass-through between the client and the server counts every
// request, and can drop replies or fail requests on demand.
let wire: PassThrough;
let redis: Redis;
const direct = newRedis();

beforeAll(async () => {
  wire = await startPassThrough({ target: inject("upstashUrl") });
  redis = new Redis({ url: wire.url, token: inject("upstashToken"), retry: false, enableTelemetry: false });
});
afterAll(() => wire.close());

/** Requests the pass-through saw while `action` ran. */
async function requestsDuring(action: () => Promise<unknown>): Promise<number> {
  const before = wire.stats.requests;
  await action();
  return wire.stats.requests - before;
}

describe("bad input is rejected before any request", () => {
  it("sends nothing for any invalid constructor option, acquire option or extend amount", async () => {
    const before = wire.stats.requests;
    const lock = new Lock({ id: uniqueId("bad-input"), redis, uuid: "seeded" });
    const invalidConstructions = [
      { id: 1 },
      { lease: 0 },
      { lease: -1 },
      { lease: 1.5 },
      { lease: Number.NaN },
      { lease: Number.POSITIVE_INFINITY },
      { lease: "10" },
      { retry: { delay: -1 } },
      { retry: { attempts: Number.NaN } },
      { uuid: 5 },
      { server: "valkey" },
      { redis: {} },
    ];
    for (const override of invalidConstructions) {
      expect(() => new Lock({ id: "x", redis, ...override } as never)).toThrow(/Expected `/);
    }
    const invalidCalls = [
      () => lock.acquire({ lease: 0 }),
      () => lock.acquire({ lease: 1.5 }),
      () => lock.acquire({ retry: { attempts: Number.NaN } }),
      () => lock.acquire({ retry: { delay: Number.NaN } }),
      () => lock.acquire({ uuid: 5 as never }),
      () => lock.acquireOrThrow({ lease: Number.POSITIVE_INFINITY }),
      () => lock.extend(-1),
      () => lock.extend(1.5),
      () => lock.extend(Number.NaN),
      () => lock.extend(Number.POSITIVE_INFINITY),
      () => lock.extend("1500" as never),
      // runExclusive checks its work before acquiring (review helper-32: it took the lock, then threw the
      // engine's TypeError, or waited out a held lock's whole timeout and never said the work was missing).
      () => lock.runExclusive(undefined as never),
      () => lock.runExclusive("work" as never),
      () => new Semaphore({ id: "s", redis, limit: 2 }).runExclusive(null as never),
    ];
    for (const call of invalidCalls) {
      await expect(call()).rejects.toThrow(/Expected `/);
    }
    expect(() => new Debounce({ id: "d", redis, wait: 0, callback: () => {} })).toThrow(RangeError);
    expect(wire.stats.requests).toBe(before);
  });
});

describe("one request per operation", () => {
  it("acquire, extend, getStatus and release each send exactly one request", async () => {
    const lock = new Lock({ id: uniqueId("one-each"), redis });
    // Warm the script cache so the count does not include a one-off NOSCRIPT fallback.
    await lock.acquire();
    await lock.extend(10);
    await lock.getStatus();
    await lock.release();
    expect(await requestsDuring(() => lock.acquire())).toBe(1);
    expect(await requestsDuring(() => lock.extend(1_000))).toBe(1);
    expect(await requestsDuring(() => lock.getStatus())).toBe(1);
    expect(await requestsDuring(() => lock.release())).toBe(1);
    expect(await requestsDuring(() => lock.release())).toBe(0);
    expect(await requestsDuring(() => lock.getStatus())).toBe(0);
  });

  it("a cold start (a new client, as in a fresh serverless instance) costs no more: one each", async () => {
    const fresh = new Redis({
      url: wire.url,
      token: inject("upstashToken"),
      retry: false,
      enableTelemetry: false,
    });
    const lock = new Lock({ id: uniqueId("cold"), redis: fresh });
    expect(await requestsDuring(() => lock.acquire())).toBe(1);
    expect(await requestsDuring(() => lock.extend(1_000))).toBe(1);
    expect(await requestsDuring(() => lock.getStatus())).toBe(1);
    expect(await requestsDuring(() => lock.release())).toBe(1);
  });
});

describe("retry.attempts counts tries", () => {
  it.each([
    [0, 1],
    [-1, 1],
    [1, 1],
    [2.5, 3],
    [3, 3],
    [5, 5],
  ])("attempts %d → %i request(s) against a held lock", async (attempts, requests) => {
    const id = uniqueId("attempts");
    const holder = new Lock({ id, redis: direct });
    await holder.acquire();
    // Polling only: a waiter's wake-up subscription is a request of its own, tested elsewhere.
    const loser = new Lock({ id, redis, retry: { attempts, delay: 5 }, wakeOnRelease: false });
    await loser.acquire(); // warm the script cache
    const error = await loser.acquireOrThrow().catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(LockAcquisitionError);
    expect((error as LockAcquisitionError).attempts).toBe(requests);
    expect(await requestsDuring(() => loser.acquire())).toBe(requests);
    await holder.release();
  });

  it("waits between tries but not after the last one", async () => {
    const id = uniqueId("no-trailing-sleep");
    const holder = new Lock({ id, redis: direct });
    await holder.acquire();
    // A delay no other timer in the process uses, so the spy counts only the lock's waits. Each wait is armed
    // for what is left of it, which on a loaded machine may be ms less (in a load run, one of the three fell
    // below 35 ms): counted from half the delay up.
    const delay = 37;
    const spy = vi.spyOn(globalThis, "setTimeout");
    try {
      const loser = new Lock({ id, redis, retry: { attempts: 4, delay }, wakeOnRelease: false });
      expect(await loser.acquire()).toBe(false);
      expect(
        spy.mock.calls.filter(([, ms]) => typeof ms === "number" && ms > delay / 2 && ms <= delay),
      ).toHaveLength(3);
    } finally {
      spy.mockRestore();
      await holder.release();
    }
  });
});

describe("EVALSHA with an EVAL fallback", () => {
  // SCRIPT FLUSH empties the script cache of the whole server: on a server of this test's own, where
  // no other test file can load the scripts again between the flush and the count.
  const privateStack = usePrivateStack();

  it("after SCRIPT FLUSH, the first call re-sends the script once; later calls use the SHA-1 only", async () => {
    const stats = privateStack().proxy.stats;
    const own = new Redis({
      url: privateStack().url,
      token: privateStack().token,
      retry: false,
      enableTelemetry: false,
    });
    const lock = new Lock({ id: uniqueId("noscript"), redis: own });
    const during = async (action: () => Promise<unknown>) => {
      const before = stats.requests;
      await action();
      return stats.requests - before;
    };
    // The first use of each script in this process sends it in full: one request each.
    expect(await during(() => lock.acquire())).toBe(1);
    expect(await during(() => lock.extend(100))).toBe(1);
    expect(await during(() => lock.release())).toBe(1);
    await own.scriptFlush();
    expect(await during(() => lock.acquire())).toBe(2);
    expect(await lock.getStatus()).toBe("ACQUIRED");
    expect(await during(() => lock.extend(100))).toBe(2);
    expect(await during(() => lock.extend(100))).toBe(1);
    expect(await during(() => lock.release())).toBe(2);
    expect(await during(() => lock.acquire())).toBe(1);
    await lock.release();
  });
});

describe("retry safety: a request that ran but whose reply was lost", () => {
  // The client's default retries are on here: that is the behaviour under test.
  const retrying = () => new Redis({ url: wire.url, token: inject("upstashToken"), enableTelemetry: false });

  it("acquire still reports true and holds the key", async () => {
    const id = uniqueId("lost-acquire");
    const lock = new Lock({ id, redis: retrying(), retry: { attempts: 1 } });
    await new Lock({ id: uniqueId("warm"), redis }).acquire(); // load the script
    wire.faults.dropReplies(1);
    expect(await lock.acquire()).toBe(true);
    expect(await lock.getStatus()).toBe("ACQUIRED");
    expect(await direct.exists(id)).toBe(1);
    expect(await lock.release()).toBe(true);
  });

  it("release answers true even though its first run already deleted the key", async () => {
    const id = uniqueId("lost-release");
    const lock = new Lock({ id, redis: retrying() });
    await lock.acquire();
    await lock.extend(1);
    wire.faults.dropReplies(1);
    expect(await lock.release()).toBe(true);
    expect(await direct.exists(id)).toBe(0);
  });

  it("extend adds its amount once, not once per run", async () => {
    const id = uniqueId("lost-extend");
    const lock = new Lock({ id, redis: retrying(), lease: 5_000 });
    await lock.acquire();
    await lock.extend(1);
    wire.faults.dropReplies(1);
    expect(await lock.extend(10_000)).toBe(true);
    const pttl = await direct.pttl(id);
    expect(pttl).toBeGreaterThan(15_000 - 2_000);
    expect(pttl).toBeLessThanOrEqual(15_001);
    await lock.release();
  });

  it("0.2.1's plain SET NX reports false while holding the key in the same situation", async () => {
    const { Lock: LockV02 } = await import("@upstash/lock-0.2.1");
    const id = uniqueId("lost-acquire-0.2");
    const old = new LockV02({ id, redis: retrying(), retry: { attempts: 1, delay: 1 } });
    wire.faults.dropReplies(1);
    expect(await old.acquire()).toBe(false);
    expect(await direct.exists(id)).toBe(1);
    await direct.del(id);
  });
});

describe("transport failures", () => {
  it("surface as LockRedisError with a redacted copy of the client's error in cause, never the token", async () => {
    const id = uniqueId("5xx");
    const uuid = `secret-${crypto.randomUUID()}`;
    const lock = new Lock({ id, redis, uuid });
    // Release last: a lease whose release was sent has ended here, and extends nothing from then on.
    for (const operation of [() => lock.extend(10), () => lock.getStatus(), () => lock.release()]) {
      wire.faults.status5xx(1);
      const error = await operation().catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(LockRedisError);
      const cause = (error as LockRedisError).cause as Error;
      expect(cause).toBeInstanceOf(Error);
      // The client's message quotes the whole command, token included. The cause is now a redacted
      // copy of the client's error: what Redis (here the pass-through) said, without the command.
      expect(cause.message).toContain("injected 503");
      const everything = `${(error as Error).message} ${(error as Error).stack} ${cause.message} ${cause.stack} ${JSON.stringify(error)}`;
      expect(everything).not.toContain(uuid);
      expect((error as Error).message).toContain(id);
    }
  });

  it("acquire throws LockRedisError when its last try fails; acquireOrThrow says why", async () => {
    const id = uniqueId("refused");
    const lock = new Lock({ id, redis, retry: { attempts: 2, delay: 5 } });
    await new Lock({ id: uniqueId("warm"), redis }).acquire();
    wire.faults.status5xx(10);
    await expect(lock.acquire()).rejects.toMatchObject({ name: "LockRedisError", operation: "acquire" });
    wire.faults.reset();
    wire.faults.status5xx(10);
    const error = await lock.acquireOrThrow().catch((caught: unknown) => caught);
    wire.faults.reset();
    expect(error).toBeInstanceOf(LockAcquisitionError);
    expect(error).toMatchObject({ reason: "redis-error", attempts: 2 });
    expect((error as Error).cause).toBeInstanceOf(LockRedisError);
    // The failed tries' undos, re-sent after the 503s, must not reach the wire during the next tests' faults
    // (under load, one took a reply the test below meant to drop).
    await within(lock.pending, 5_000, "the undos of the failed tries");
  });

  it("an earlier failed try does not hide a later success", async () => {
    const id = uniqueId("recovers");
    const lock = new Lock({ id, redis, retry: { attempts: 3, delay: 5 } });
    await new Lock({ id: uniqueId("warm"), redis }).acquire();
    wire.faults.status5xx(1);
    expect(await lock.acquire()).toBe(true);
    await lock.release();
    await within(lock.pending, 5_000, "the undo of the failed try");
  });

  it("when the last try's reply is lost for good, the lock it may have taken is released in the background", async () => {
    const id = uniqueId("lost-for-good");
    await new Lock({ id: uniqueId("warm"), redis }).acquire();
    // retry: false still makes two tries when fetch throws; drop both replies.
    const lock = new Lock({ id, redis, retry: { attempts: 1 } });
    wire.faults.dropReplies(2);
    await expect(lock.acquire()).rejects.toBeInstanceOf(LockRedisError);
    wire.faults.reset();
    // The undo goes out in the background, once the acquire has failed; `pending` settles after it.
    await within(lock.pending, 5_000, "the undo of the lost try");
    expect(await direct.exists(id)).toBe(0);
  });
});
