import { describe, expect, it } from "vitest";
import { type EvalClient, FairLock, Lock, LockAcquisitionError, Semaphore } from "../../src/index";
import { pause, waitUntil, within } from "../faults/support/time";
import { newRedis, uniqueId } from "../support/redis";

const redis = newRedis();

/** A client passing every script on to `redis`, counting those sent and those answered (its tries). */
function countingClient(): { client: EvalClient; sent(): number; answered(): number } {
  let sent = 0;
  let answered = 0;
  const counted = <T>(reply: () => Promise<T>) => {
    sent += 1;
    return reply().finally(() => {
      answered += 1;
    });
  };
  return {
    client: {
      eval: (script, keys, args) => counted(() => redis.eval(script, keys, args)),
      evalsha: (sha1, keys, args) => counted(() => redis.evalsha(sha1, keys, args)),
    },
    sent: () => sent,
    answered: () => answered,
  };
}

describe("waiting for a held lock", () => {
  it("never sleeps past the holder's remaining lease, learnt from the failed attempt", async () => {
    const id = uniqueId("lease-cap");
    // Long enough that a loaded machine answers the acquire within it (300 ms was not, beside 4 busy loops).
    await new Lock({ id, redis, lease: 1_500 }).acquire();
    // Two tries 10 minutes apart: the second happens when the 1.5 s lease ends. A wait that slept its
    // delay is a hang, not a slower pass: raced with a plain timer far from both (10 times the lease's
    // wait, a 40th of the delay), then aborted, lest its 10-minute timer outlive the test.
    const waiter = new Lock({ id, redis, retry: { attempts: 2, delay: 600_000 } });
    const stop = new AbortController();
    try {
      const acquiring = waiter.acquire({ signal: stop.signal });
      expect(await within(acquiring, 15_000, "the second try, due when the 1.5 s lease ends")).toBe(true);
    } finally {
      stop.abort();
    }
    await waiter.release();
  });

  it("timeout bounds the wait and tries until it runs out", async () => {
    const id = uniqueId("timeout");
    const holder = new Lock({ id, redis, lease: 60_000 }); // held through the count, however slow the tries
    await holder.acquire();
    // Polling only: a subscribed wait replaces most polls (see test/lock/costs.test.ts).
    const waiter = new Lock({ id, redis, retry: { delay: 50 }, wakeOnRelease: false });
    const error = await waiter.acquireOrThrow({ timeout: 400 }).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(LockAcquisitionError);
    expect((error as LockAcquisitionError).reason).toBe("timeout");
    await expect(waiter.acquireOrThrow({ timeout: 100 })).rejects.toBeInstanceOf(LockAcquisitionError);
    // More than the default 3 tries: without an explicit count, a timeout means "until it runs out". Counted
    // by the client within a timeout no machine uses up, not within 400 ms: beside 4 busy loops, 3 round
    // trips took that long (3 of 6 runs failed).
    const { client, answered } = countingClient();
    let settled = false;
    const untilReleased = new Lock({ id, redis: client, retry: { delay: 20 }, wakeOnRelease: false });
    const waiting = untilReleased.acquire({ timeout: 20_000 }).finally(() => {
      settled = true;
    });
    await waitUntil(() => answered() > 3 || settled, "a fourth try, or the end of the wait", {
      timeoutMs: 15_000,
    });
    expect(settled, "the wait ended before a fourth try").toBe(false);
    await holder.release();
    expect(await waiting).toBe(true);
    await untilReleased.release();
  });

  it("timeout acquires as soon as the holder releases", async () => {
    const id = uniqueId("timeout-wins");
    const holder = new Lock({ id, redis });
    expect(await holder.acquire()).toBe(true);
    // The waiter's client counts its tries' answers, so that the release comes once it was waiting (waited
    // for, not assumed after a fixed 100 ms: a first try after the release takes the free lock, no wait).
    const { client, answered } = countingClient();
    const waiting = new Lock({ id, redis: client, retry: { delay: 20 } }).acquire({ timeout: 10_000 });
    await waitUntil(() => answered() >= 1, "the waiter's first try, which finds the lock held");
    const triesBefore = answered();
    expect(await holder.release()).toBe(true);
    expect(await waiting).toBe(true);
    expect(answered()).toBeGreaterThan(triesBefore); // a try after the release took it
    // No clock reading: the 10 s timeout bounds the wait (false past it), and that a timeout polls at the
    // retry delay, not once at its end, is "timeout bounds the wait and tries until it runs out"'s count.
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
    // The waiter's client counts the tries sent and answered: the abort comes once the first try found the
    // lock held and the 5 s wait began (waited for, not assumed after a fixed 100 ms).
    const { client, sent, answered } = countingClient();
    const controller = new AbortController();
    const waiter = new Lock({
      id,
      redis: client,
      retry: { attempts: Number.POSITIVE_INFINITY, delay: 5_000 },
    });
    const waiting = waiter.acquireOrThrow({ signal: controller.signal });
    await waitUntil(() => answered() >= 1, "the waiter's first try, which finds the lock held");
    const sentBefore = sent();
    const reason = new Error("user went away");
    // A plain timer started at the abort, due long before the 5 s step: a wait that slept through the abort
    // ends after it, even one that then checks the signal before its next try and sends none (review helper-198).
    const order: string[] = [];
    void pause(1_000).then(() => order.push("the timer"));
    controller.abort(reason);
    // Bounded, as a wait deaf to the abort would go on trying forever.
    await expect(within(waiting, 20_000, "the aborted wait")).rejects.toBe(reason);
    order.push("the wait");
    expect(order).toEqual(["the wait"]);
    // No try after the abort either.
    expect(sent()).toBe(sentBefore);
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
