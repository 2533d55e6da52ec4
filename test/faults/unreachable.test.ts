// Redis cannot be reached while a lock is held: the holder cannot know whether it still holds the
// lock, so the signal must abort by the local deadline; and nothing may hang or go unhandled.
// A private stack, because these tests stop Redis.
import { describe, expect, it, vi } from "vitest";
import { Lock, LockLostError } from "../../src/index";
import { uniqueId } from "../support/redis";
import { releasedAfterTest } from "./support/cleanup";
import { usePrivateStack, useWire } from "./support/endpoints";
import { abortTime, now, pause, within } from "./support/time";
import { trackUnhandledRejections } from "./support/unhandled";

const stack = usePrivateStack();
const wire = useWire(() => stack().endpoint);
const unhandled = trackUnhandledRejections();

// Long enough that a slow acquire on a loaded machine still leaves time for the first renewal,
// half a lease after the reply, and its retries before the deadline.
const LEASE_MS = 3_000;
/** A busy two-core machine may run a timer late; the point is that nothing waits for Redis. */
const LATE_TOLERANCE_MS = 300;

/**
 * Acquires with auto-extend, breaks the connection with `cutOff`, and checks the signal aborted as
 * "expired" within the lease counted from before the acquire, and not before it could have ended.
 */
async function expectExpiresOnTime(label: string, cutOff: () => Promise<void> | void) {
  const id = uniqueId(label);
  const onLost = vi.fn();
  const lock = releasedAfterTest(new Lock({ id, redis: wire().faulty, lease: LEASE_MS, onLost }));
  const acquireStart = now();
  // A plain timer of the lease, started beside the acquire: a loaded machine runs it as late as the lock's.
  const plainLeaseEnd = new Promise<number>((resolve) => setTimeout(() => resolve(now()), LEASE_MS));
  // The first renewal comes half a lease in, well after the cut-off (stopping redis-server takes
  // a few ms): the deadline to meet is the acquire's.
  await lock.acquireOrThrow({ autoExtend: { interval: LEASE_MS / 2 } });
  const aborted = abortTime(lock.signal);
  const beforeCut = wire().requests();
  await cutOff();

  const abortedAt = await within(aborted, LEASE_MS + 5_000, "the signal with Redis unreachable");
  const latest = Math.max(acquireStart + LEASE_MS, await plainLeaseEnd) + LATE_TOLERANCE_MS;
  expect(abortedAt).toBeLessThanOrEqual(latest);
  // Not declared lost while the first lease could still be running (minus the 1 % + 2 ms drift allowance).
  expect(abortedAt).toBeGreaterThanOrEqual(acquireStart + LEASE_MS * 0.99 - 10);
  const reason = lock.signal.reason as LockLostError;
  expect(reason).toBeInstanceOf(LockLostError);
  expect(reason.reason).toBe("expired");
  expect(onLost).toHaveBeenCalledTimes(1);
  expect(onLost.mock.calls[0]?.[0]).toBe(reason);
  expect(lock.remainingMs).toBe(0);
  // Failed renewals were retried while the lease lasted...
  expect(wire().requests() - beforeCut).toBeGreaterThanOrEqual(2);
  // ...and stop after the loss. A renewal that failed may have run: the release of what it may have renewed
  // is sent (again after a failure, up to 4 times) in the background; once that settled, nothing is sent.
  await within(lock.pending, 5_000, "the release of what a failed renewal may have renewed");
  await pause(100); // a request already under way may still arrive
  const afterLoss = wire().requests();
  await pause(1_000);
  expect(wire().requests()).toBe(afterLoss);
  expect(onLost).toHaveBeenCalledTimes(1);
  expect(unhandled()).toEqual([]);
  return { id, lock };
}

describe("Redis unreachable while the lock is held", () => {
  it("every request refused: the signal aborts as 'expired' by the local deadline, then renewals stop", async () => {
    const { lock } = await expectExpiresOnTime("unreachable-refused", () =>
      wire().passThrough.faults.refuse(),
    );
    // Behaviour since the rewrite: past the local deadline Redis has expired the key anyway, so
    // release() answers false at once ("the lease ran out first") rather than waiting for, or
    // failing with, a Redis it cannot reach; its request finishes in the background, harmlessly.
    const before = wire().requests();
    expect(await within(lock.release(), 1_000, "release")).toBe(false);
    await within(lock.pending, 5_000, "the release left in the background");
    // One release request (which @upstash/redis sends twice when fetch throws, even with retry: false).
    expect(wire().requests() - before).toBeLessThanOrEqual(2);
    expect(unhandled()).toEqual([]);
    wire().passThrough.faults.reset();
  });

  it("redis-server stopped: the same; after a restart a new acquire works, renewals included", async () => {
    let id: string;
    try {
      ({ id } = await expectExpiresOnTime("unreachable-stopped", () => stack().redis.stop()));
    } finally {
      await stack().redis.restart(); // also when a check failed: the file's later tests need their Redis
    }
    // A fresh server has an empty script cache: this also takes the NOSCRIPT fallback.
    // Renewed every 750 ms, past its first lease: a 300 ms lease (renewed every 150 ms) lapsed once beside four
    // busy loops, a timer late by more than half of it.
    const lock = releasedAfterTest(new Lock({ id, redis: wire().faulty, lease: 1_500 }));
    expect(await lock.acquire({ autoExtend: true })).toBe(true);
    await pause(2_000);
    expect(lock.signal.aborted).toBe(false);
    expect(await wire().direct.pttl(id)).toBeGreaterThan(0);
    expect(await lock.release()).toBe(true);
    expect(await wire().direct.exists(id)).toBe(0);
    expect(unhandled()).toEqual([]);
  });

  it("an acquire while Redis is down fails as a LockRedisError without hanging, and sends nothing afterwards", async () => {
    const id = uniqueId("unreachable-acquire");
    const lock = releasedAfterTest(new Lock({ id, redis: wire().faulty, lease: LEASE_MS }));
    wire().passThrough.faults.refuse();
    const started = now();
    const acquiring = lock.acquire({ autoExtend: true, retry: { attempts: 2, delay: 50 } });
    await expect(acquiring).rejects.toMatchObject({ name: "LockRedisError", operation: "acquire" });
    // "Without hanging": two refused tries 50 ms apart take a few ms each; 5 s is a hang.
    expect(now() - started).toBeLessThan(5_000);
    expect(lock.signal.aborted).toBe(true);
    expect((lock.signal.reason as LockLostError).reason).toBe("not-held");
    // Each failed try may have run with its reply lost: since the rewrite it is undone in the
    // background (by its receipt), after the acquire failed. Nothing is sent once that settled.
    await within(lock.pending, 5_000, "the undo of the failed tries");
    wire().passThrough.faults.reset();
    const afterFailure = wire().requests();
    await pause(500);
    expect(wire().requests()).toBe(afterFailure);
    expect(await wire().direct.exists(id)).toBe(0);
  });
});

describe("Redis unreachable while many callers share one Lock", () => {
  // Review helper-52 (2026-12-04): the callers that only waited for another caller's turn here were told
  // the lock was held ("another caller of this instance held it or was acquiring it"): 10 of 12.
  it("every caller fails as redis-error, those that waited for the turn here too", async () => {
    const lock = new Lock({ id: uniqueId("unreachable-shared"), redis: wire().faulty, lease: LEASE_MS });
    wire().passThrough.faults.refuse();
    const reasons = await Promise.all(
      Array.from({ length: 12 }, (_, caller) =>
        lock.acquireOrThrow(caller % 2 ? { timeout: 600 } : { retry: { attempts: 3, delay: 50 } }).then(
          () => "acquired",
          (error: { reason?: string; cause?: unknown }) =>
            `${error.reason}${error.cause instanceof Error ? "" : " without a cause"}`,
        ),
      ),
    );
    wire().passThrough.faults.reset();
    await lock.pending;
    expect(reasons).toEqual(Array.from({ length: 12 }, () => "redis-error"));
    expect(unhandled()).toEqual([]);
  });

  // Review helper-55 (2026-12-04): with Redis silent, not refusing, the turn-holder's try is still in flight
  // when the waiters' tries run out, so nothing had erred yet: they were told "another caller of this
  // instance held it or was acquiring it", which hid that Redis had answered nothing all along.
  it("Redis silent: a caller that waited for the turn is told the turn-holder's try went unanswered", async () => {
    const lock = new Lock({ id: uniqueId("unreachable-silent"), redis: wire().faulty, lease: LEASE_MS });
    wire().passThrough.faults.latency(LEASE_MS * 2);
    const holder = lock.acquireOrThrow().catch((error) => error);
    const waiters = await Promise.all(
      Array.from({ length: 3 }, () =>
        lock.acquireOrThrow({ retry: { attempts: 3, delay: 50 } }).catch((error) => error),
      ),
    );
    for (const waited of waiters) {
      expect(waited.reason).toBe("held"); // it only waited here: no answer of Redis's said otherwise
      expect(waited.message).toMatch(
        /another caller of this instance was acquiring it, and Redis did not answer/,
      );
      expect(waited.cause).toMatchObject({ code: "LOCK_REDIS_ERROR", operation: "acquire" });
    }
    expect((await holder).reason).toBe("redis-error");
    wire().passThrough.faults.reset();
    await lock.pending;
    expect(unhandled()).toEqual([]);
  });

  // Review helper-126 (stop 49), helper-135 and helper-137 (stop 50, 3/3 each): a caller that waited for
  // another caller here, then sent its own try, which the timeout cut off, was told "another caller of this
  // instance was acquiring it, and Redis did not answer" (that caller gone, its release unanswered), or
  // failed with that caller's own 503. A wait for a holder here counts as a "held" answer would: the reason
  // stays "timeout", and the own try's silence is the cause. Errors of that caller's tries meanwhile are an
  // outage: "redis-error", told by the own try's silence (plain acquire() throws it). Over a slow link, a
  // release here answered just before the timeout, the try after it cut off, is contention.
  it.each([
    ["a holder here whose release Redis left unanswered", "release", "timeout"],
    ["a caller here whose try failed (503)", "503", "redis-error"],
  ] as const)(
    "after waiting for %s, the caller's own unanswered try is named",
    async (_name, before, reason) => {
      // The timeout, not the try's lease, cuts the own try off: it ends before that try's lease would.
      const [lease, timeout] = before === "release" ? [1_500, 2_500] : [3_000, 1_500];
      const lock = new Lock({ id: uniqueId("unreachable-own-try"), redis: wire().faulty, lease });
      const faults = wire().passThrough.faults;
      let other: Promise<unknown>;
      if (before === "release") {
        expect(await lock.acquire()).toBe(true);
        faults.latency(6_000);
        other = lock.release().catch((error: unknown) => error);
      } else {
        faults.status5xx(1);
        faults.latency(6_000);
        other = lock.acquire({ retry: { attempts: 1 } }).catch((error: unknown) => error);
      }
      const config = { retry: { attempts: Number.POSITIVE_INFINITY, delay: 100 }, timeout };
      const failure = await lock.acquireOrThrow(config).catch((error: unknown) => error);
      expect(failure).toMatchObject({ reason, cause: { operation: "acquire" } });
      const said =
        reason === "timeout"
          ? /another caller of this instance held it or was acquiring it; then Redis did not answer \(no reply within \d+ ms\)$/
          : /: Redis did not answer \(no reply within \d+ ms\)$/;
      expect((failure as Error).message).toMatch(said);
      faults.reset();
      await other;
      await lock.pending;
      expect(unhandled()).toEqual([]);
    },
  );

  it("a release here answered just before the timeout, over a slow link: acquire() answers false", async () => {
    const lock = new Lock({ id: uniqueId("unreachable-slow-turn"), redis: wire().faulty, lease: 5_000 });
    expect(await lock.acquire()).toBe(true);
    wire().passThrough.faults.latency(80);
    const waiting = lock.acquire({ timeout: 1_000 }).catch((error: unknown) => error);
    await pause(1_000 - 80 - 30); // the release is answered about 30 ms before the waiter's timeout
    expect(await lock.release()).toBe(true);
    expect(await waiting).toBe(false);
    wire().passThrough.faults.reset();
    await lock.pending;
  });

  // Review helper-56 (2026-12-04): the error of an acquisition that had ended before the caller began was
  // still the instance's, and a caller waiting for a later, healthy turn-holder failed with it.
  it("an outage that ended before the caller began is not its error: it waited for a holder here", async () => {
    const lock = new Lock({ id: uniqueId("unreachable-stale"), redis: wire().faulty, lease: LEASE_MS });
    wire().passThrough.faults.refuse();
    await expect(lock.acquire({ retry: { attempts: 1 } })).rejects.toMatchObject({
      code: "LOCK_REDIS_ERROR",
    });
    wire().passThrough.faults.reset();
    await pause(300); // the failed try's undo, re-sent by the client, lands before the next try
    wire().passThrough.faults.delayNext(1, 400); // the next turn-holder's try is slow, not failed
    const holder = lock.acquire({ timeout: 3_000 });
    expect(await lock.acquire({ retry: { attempts: 2, delay: 50 } })).toBe(false);
    expect(await holder).toBe(true);
    expect(await lock.release()).toBe(true);
  });

  // Review helper-60 (2026-12-04): an aborted turn-holder's try left its send time as the instance's
  // "unanswered since", and a later caller waiting for a lease here was told Redis had not answered (5/5).
  it("a turn-holder's try aborted in flight leaves no silence behind for later callers", async () => {
    const id = uniqueId("unreachable-aborted");
    const uuid = crypto.randomUUID();
    expect(await new Lock({ id, redis: wire().direct, lease: LEASE_MS }).acquire({ uuid })).toBe(true);
    const lock = new Lock({ id, redis: wire().faulty, uuid, lease: LEASE_MS });
    wire().passThrough.faults.delayNext(1, 800);
    const signal = AbortSignal.timeout(100);
    await expect(lock.acquire({ uuid: crypto.randomUUID(), signal })).rejects.toMatchObject({
      name: "TimeoutError",
    });
    await pause(1_000); // the delayed try was answered ("held")
    expect(await lock.getStatus()).toBe("ACQUIRED"); // the seeded lease holds here, and has the turn
    const waited = await lock.acquireOrThrow({ retry: { attempts: 2, delay: 50 } }).catch((error) => error);
    expect(waited.message).toContain("another caller of this instance held it or was acquiring it");
    expect(waited.cause).toBeUndefined();
    expect(await lock.release()).toBe(true);
  });

  it("a caller that waited for a holder here, after one of its tries failed, is told the lock was held", async () => {
    const lock = new Lock({ id: uniqueId("unreachable-blip"), redis: wire().faulty, lease: LEASE_MS });
    wire().passThrough.faults.refuse(2); // the first try, and the client's re-send of it
    expect(await lock.acquire({ retry: { attempts: 2, delay: 50 } })).toBe(true);
    const waited = await lock.acquireOrThrow({ retry: { attempts: 2, delay: 50 } }).catch((error) => error);
    expect(waited.reason).toBe("held");
    expect(waited.message).toContain("another caller of this instance held it");
    expect(await lock.release()).toBe(true);
  });

  // Review helper-53 (2026-12-04): the instance kept the error of any caller's newest try, so a same-uuid
  // try (which takes no turn) or an acquire before a seeded uuid was confirmed made a waiter fail as an
  // outage while a lease here held.
  it.each(["a same-uuid acquire", "an acquire before the seeded uuid was confirmed"])(
    "%s refused, while a lease here holds: the waiter is told the lock was held",
    async (how) => {
      const id = uniqueId("unreachable-not-the-turn");
      const uuid = crypto.randomUUID();
      const seeded = how.includes("seeded");
      if (seeded) await new Lock({ id, redis: wire().direct, lease: LEASE_MS }).acquire({ uuid });
      const lock = new Lock({ id, redis: wire().faulty, lease: LEASE_MS, ...(seeded ? { uuid } : {}) });
      if (!seeded) expect(await lock.acquire({ uuid })).toBe(true);
      wire().passThrough.faults.refuse(2); // one try, and the client's re-send of it
      await expect(lock.acquire({ uuid, retry: { attempts: 1 } })).rejects.toMatchObject({
        code: "LOCK_REDIS_ERROR",
      });
      wire().passThrough.faults.reset();
      expect(await lock.getStatus()).toBe("ACQUIRED"); // the lease here holds, and has the turn
      const waited = await lock.acquireOrThrow({ retry: { attempts: 2, delay: 50 } }).catch((error) => error);
      expect(waited.reason).toBe("held");
      expect(await lock.release()).toBe(true);
    },
  );
});
