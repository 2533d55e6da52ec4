import { describe, expect, it } from "vitest";
import { type EvalClient, FairLock, Lock, LockAcquisitionError, Semaphore } from "../../src/index";
import { waitUntil } from "../faults/support/time";
import { newRedis, uniqueId } from "../support/redis";

const redis = newRedis();

describe("waiting for a held lock", () => {
  it("never sleeps past the holder's remaining lease, learnt from the failed attempt", async () => {
    const id = uniqueId("lease-cap");
    // Long enough that a loaded machine answers the acquire within it (300 ms was not, beside 4 busy loops).
    await new Lock({ id, redis, lease: 1_500 }).acquire();
    // Two tries 20 s apart: the second happens when the 1.5 s lease ends, not 20 s later.
    const waiter = new Lock({ id, redis, retry: { attempts: 2, delay: 20_000 } });
    const started = performance.now();
    expect(await waiter.acquire()).toBe(true);
    // About 1.5 s when the wait is capped by the lease; 20 s if it slept its delay. Half of that
    // tells the two apart with a margin of six times the expected wait.
    expect(performance.now() - started).toBeLessThan(10_000);
    await waiter.release();
  });

  it("timeout bounds the wait and tries until it runs out", async () => {
    const id = uniqueId("timeout");
    const holder = new Lock({ id, redis });
    await holder.acquire();
    // Polling only: a subscribed wait replaces most polls (see test/lock/costs.test.ts).
    const waiter = new Lock({ id, redis, retry: { delay: 50 }, wakeOnRelease: false });
    const error = await waiter.acquireOrThrow({ timeout: 400 }).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(LockAcquisitionError);
    expect((error as LockAcquisitionError).reason).toBe("timeout");
    // More than the default 3 tries: without an explicit count, a timeout means "until it runs out".
    expect((error as LockAcquisitionError).attempts).toBeGreaterThan(3);
    await expect(waiter.acquireOrThrow({ timeout: 100 })).rejects.toBeInstanceOf(LockAcquisitionError);
    await holder.release();
  });

  it("timeout acquires as soon as the holder releases", async () => {
    const id = uniqueId("timeout-wins");
    const holder = new Lock({ id, redis });
    expect(await holder.acquire()).toBe(true);
    // The waiter's client counts its tries' answers, so that the release comes once it was waiting (waited
    // for, not assumed after a fixed 100 ms: a first try after the release takes the free lock, no wait).
    let answered = 0;
    const counted = <T>(reply: Promise<T>) =>
      reply.finally(() => {
        answered += 1;
      });
    const client: EvalClient = {
      eval: (script, keys, args) => counted(redis.eval(script, keys, args)),
      evalsha: (sha1, keys, args) => counted(redis.evalsha(sha1, keys, args)),
    };
    const waiting = new Lock({ id, redis: client, retry: { delay: 20 } }).acquire({ timeout: 10_000 });
    await waitUntil(() => answered >= 1, "the waiter's first try, which finds the lock held");
    const triesBefore = answered;
    const releasedAt = performance.now();
    expect(await holder.release()).toBe(true);
    expect(await waiting).toBe(true);
    expect(answered).toBeGreaterThan(triesBefore); // a try after the release took it
    // As soon as: polling every 20 ms, well within the 10 s timeout (a wide margin for a loaded machine).
    expect(performance.now() - releasedAt).toBeLessThan(5_000);
  });

  it("an explicit attempts count still applies within a timeout", async () => {
    const id = uniqueId("timeout-attempts");
    const holder = new Lock({ id, redis });
    await holder.acquire();
    const error = await new Lock({ id, redis, retry: { attempts: 2, delay: 10 } })
      .acquireOrThrow({ timeout: 10_000 })
      .catch((caught: unknown) => caught);
    expect(error).toMatchObject({ reason: "held", attempts: 2 });
    await holder.release();
  });

  it("exponential backoff with jitter still acquires once the lock is free", async () => {
    const id = uniqueId("exponential");
    const holder = new Lock({ id, redis, lease: 600 });
    await holder.acquire();
    const waiter = new Lock({
      id,
      redis,
      retry: {
        attempts: Number.POSITIVE_INFINITY,
        delay: 10,
        backoff: "exponential",
        maxDelay: 80,
        jitter: 0.5,
      },
    });
    expect(await waiter.acquire({ timeout: 5_000 })).toBe(true);
    await waiter.release();
  });
});

describe("cancelling a wait", () => {
  it("an already-aborted signal rejects with its reason before any request", async () => {
    const reason = new Error("cancelled by caller");
    const lock = new Lock({ id: uniqueId("pre-aborted"), redis });
    await expect(lock.acquire({ signal: AbortSignal.abort(reason) })).rejects.toBe(reason);
    await expect(lock.acquireOrThrow({ signal: AbortSignal.abort(reason) })).rejects.toBe(reason);
    expect(await lock.getStatus()).toBe("FREE");
  });

  it("abort ends a long wait at once, rejecting with the signal's reason", async () => {
    const id = uniqueId("abort-wait");
    const holder = new Lock({ id, redis });
    await holder.acquire();
    const controller = new AbortController();
    const waiter = new Lock({ id, redis, retry: { attempts: Number.POSITIVE_INFINITY, delay: 5_000 } });
    const waiting = waiter.acquireOrThrow({ signal: controller.signal });
    await new Promise((resolve) => setTimeout(resolve, 100));
    const reason = new Error("user went away");
    const abortedAt = performance.now();
    controller.abort(reason);
    await expect(waiting).rejects.toBe(reason);
    // At once (a few ms) when the abort ends the wait; up to the 5 s delay if it slept through it.
    // Half the delay leaves hundreds of times the expected value.
    expect(performance.now() - abortedAt).toBeLessThan(2_500);
    expect(await holder.getStatus()).toBe("ACQUIRED");
    await holder.release();
  });
});

describe("a try still in flight when the timeout runs out", () => {
  // The timer that ends a try at the budget may fire a fraction of a millisecond early: the budget
  // still decides, not the clock reading.
  it("after a try that found the lock held: not acquired, reason 'timeout', every time", async () => {
    const reasons: unknown[] = [];
    for (let run = 0; run < 50; run++) {
      // The first try finds the lock held for 30 s more; every later one hangs, as a request in flight does.
      let tries = 0;
      const client: EvalClient = {
        eval: () => (tries++ === 0 ? Promise.resolve([0, 30_000]) : new Promise(() => {})),
      };
      const lock = new Lock({ id: `in-flight-at-timeout-${run}`, redis: client });
      const error = await lock
        .acquireOrThrow({ timeout: 50, retry: { delay: 10 } })
        .catch((caught: unknown) => caught);
      reasons.push((error as LockAcquisitionError).reason);
    }
    expect(reasons).toEqual(reasons.map(() => "timeout"));
  });
});

// Review of 2026-12-01: each try's wait for its answer was counted from Redis's last answer, not from the
// try's own send, so after a wait between tries longer than the waiter's lease, the next try timed out at
// once and a held lock read as an outage ("Redis did not answer (no reply within 0 ms)").
describe("a wait between tries longer than the waiter's lease, on a healthy Redis", () => {
  it("Lock polling every 1 s with a 500 ms lease: held throughout is false, not an outage", async () => {
    const id = uniqueId("short-lease-long-wait");
    const holder = new Lock({ id, redis, lease: 20_000 });
    expect(await holder.acquire()).toBe(true);
    const waiter = new Lock({ id, redis, lease: 500, retry: { delay: 1_000, attempts: 2 } });
    expect(await waiter.acquire()).toBe(false);
    expect(await holder.release()).toBe(true);
  });

  it.each(["FairLock", "fair Semaphore"] as const)(
    "%s with a 500 ms lease, subscribed (polling every 1 s): the timeout, not an outage",
    async (name) => {
      const id = uniqueId("short-lease-fair");
      const make = (lease: number) =>
        name === "FairLock"
          ? new FairLock({ id, redis, lease })
          : new Semaphore({ id, redis, limit: 1, fair: true, lease });
      const holder = make(20_000);
      const held = await holder.acquireOrThrow();
      const error = await make(500)
        .acquireOrThrow({ timeout: 2_500 })
        .catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(LockAcquisitionError);
      expect((error as LockAcquisitionError).reason).toBe("timeout");
      expect(await held.release()).toBe(true);
    },
  );
});
