import { describe, expect, it, vi } from "vitest";
import { type EvalClient, type Lease, Lock, LockLostError } from "../../src/index";
import { releaseLock, renewLock } from "../../src/scripts/lock";
import { abortTime, pause, waitUntil, within } from "../faults/support/time";
import { newRedis, uniqueId } from "../support/redis";
import { sha1 } from "../support/scripts";

const redis = newRedis();

/** Resolves once `signal` aborts; fails the test if it has not within `ms`. */
function aborted(signal: AbortSignal, ms: number): Promise<number> {
  return within(abortTime(signal), ms, "the lease's signal");
}

function lossOf(signal: AbortSignal): LockLostError {
  expect(signal.aborted).toBe(true);
  expect(signal.reason).toBeInstanceOf(LockLostError);
  return signal.reason as LockLostError;
}

describe("remaining lease and signal", () => {
  it("remainingMs counts down from the lease; the signal is live while held", async () => {
    const id = uniqueId("remaining");
    const lock = new Lock({ id, redis, lease: 10_000 });
    expect(lock.remainingMs).toBe(0);
    expect(lossOf(lock.signal).reason).toBe("not-held");

    await lock.acquireOrThrow();
    expect(lock.remainingMs).toBeGreaterThan(5_000);
    expect(lock.remainingMs).toBeLessThanOrEqual(10_000 - 100 - 2);
    const signal = lock.signal;
    expect(signal.aborted).toBe(false);

    await lock.release();
    expect(lock.remainingMs).toBe(0);
    // Releasing is not losing: the hold's signal stays quiet; the lock now reports "not held".
    expect(signal.aborted).toBe(false);
    expect(lossOf(lock.signal).reason).toBe("not-held");
  });

  it("without auto-extend, the signal aborts (reason expired) when the lease runs out locally", async () => {
    const onLost = vi.fn();
    // 600 ms, not less: an acquire's bound is its lease, and loaded runs have seen a reply take 988 ms.
    const lock = new Lock({ id: uniqueId("expires"), redis, lease: 600, onLost });
    await lock.acquireOrThrow();
    const signal = lock.signal;
    await aborted(signal, 2_000);
    expect(lossOf(signal).reason).toBe("expired");
    expect(onLost).toHaveBeenCalledTimes(1);
    expect(onLost).toHaveBeenCalledWith(signal.reason);
    expect(lock.remainingMs).toBe(0);
  });

  it("extend moves the local deadline forward", async () => {
    const lock = new Lock({ id: uniqueId("extend-deadline"), redis, lease: 1_000 });
    await lock.acquireOrThrow();
    expect(await lock.extend(5_000)).toBe(true);
    expect(lock.remainingMs).toBeGreaterThan(4_000);
    await lock.release();
  });

  it("a loss that extend or getStatus discovers aborts the signal (reason taken) and calls onLost once", async () => {
    const id = uniqueId("discovered");
    const onLost = vi.fn();
    const lock = new Lock({ id, redis, onLost });
    await lock.acquireOrThrow();
    const signal = lock.signal;
    await redis.set(id, "someone-else");
    expect(await lock.extend(1_000)).toBe(false);
    expect(lossOf(signal).reason).toBe("taken");
    expect(await lock.getStatus()).toBe("FREE");
    expect(onLost).toHaveBeenCalledTimes(1);
    expect(await redis.get(id)).toBe("someone-else");
    await redis.del(id);
  });

  it("an onLost that throws, or rejects, is contained", async () => {
    const throwing = new Lock({
      id: uniqueId("throwing-onlost"),
      redis,
      lease: 500,
      onLost: () => {
        throw new Error("handler bug");
      },
    });
    const rejecting = new Lock({
      id: uniqueId("rejecting-onlost"),
      redis,
      lease: 500,
      onLost: async () => {
        throw new Error("async handler bug");
      },
    });
    await throwing.acquireOrThrow();
    const throwingSignal = throwing.signal;
    await rejecting.acquireOrThrow();
    const rejectingSignal = rejecting.signal;
    // Both leases run out (and their handlers run), however late a loaded machine's timers fire.
    await Promise.all([aborted(throwingSignal, 2_000), aborted(rejectingSignal, 2_000)]);
    await pause(100); // a window for the handlers' errors to surface as uncaught: none must
    // Reaching here without an unhandled error (the suite fails on those) is the assertion.
    expect(lossOf(throwing.signal).reason).toBe("expired");
    expect(lossOf(rejecting.signal).reason).toBe("expired");
  });
});

describe("auto-extend", () => {
  it("keeps a short lease alive through longer work, then stops at release", async () => {
    const id = uniqueId("auto-extend");
    // Renewed every 500 ms: a 300 ms lease, renewed every 150 ms, lapses beside four busy loops when a timer
    // is late by half of it (as in unreachable.test.ts's restart case, once).
    const lock = new Lock({ id, redis, lease: 1_000, autoExtend: true });
    await lock.acquireOrThrow();
    await pause(2_500);
    expect(lock.signal.aborted).toBe(false);
    expect(await redis.exists(id)).toBe(1);
    expect(await lock.getStatus()).toBe("ACQUIRED");
    await lock.release();
    await pause(300); // a window for a renewal still in flight to bring the key back: it must not
    expect(await redis.exists(id)).toBe(0);
  });

  it("per-acquire settings override the lock's, for that acquisition only", async () => {
    const id = uniqueId("auto-extend-override");
    const lock = new Lock({ id, redis, lease: 800 });
    await lock.acquireOrThrow({ autoExtend: { interval: 100 } });
    await pause(1_300); // past the lease: a window in which the hold must not be lost
    expect(await lock.getStatus()).toBe("ACQUIRED");
    await lock.release();

    await lock.acquireOrThrow();
    const signal = lock.signal;
    await aborted(signal, 2_000);
    expect(lossOf(signal).reason).toBe("expired");
  });

  it("renewal finds another owner's token: loss reported as taken", async () => {
    const id = uniqueId("auto-extend-taken");
    const onLost = vi.fn();
    const lock = new Lock({ id, redis, lease: 1_000, autoExtend: { interval: 100 }, onLost });
    await lock.acquireOrThrow();
    const signal = lock.signal;
    await redis.set(id, "intruder", { px: 5_000 });
    await aborted(signal, 2_000);
    expect(lossOf(signal).reason).toBe("taken");
    expect(onLost).toHaveBeenCalledTimes(1);
    expect(await redis.get(id)).toBe("intruder");
    await redis.del(id);
  });
});

describe("runExclusive", () => {
  it("runs the work under the lock with its signal and lease, returns its result, and releases", async () => {
    const id = uniqueId("run-exclusive");
    const lock = new Lock({ id, redis });
    let held: Lease | undefined;
    const result = await lock.runExclusive(async (signal, lease) => {
      held = lease;
      expect(signal).toBe(lock.signal);
      expect(signal).toBe(lease.signal);
      expect(signal.aborted).toBe(false);
      expect(lease.id).toBe(id);
      expect(await lease.getStatus()).toBe("ACQUIRED");
      expect(await redis.exists(id)).toBe(1);
      return 42;
    });
    expect(result).toBe(42);
    expect(await redis.exists(id)).toBe(0);
    // The lease ended with the work: released, not lost.
    expect(held?.remainingMs).toBe(0);
    expect(held?.signal.aborted).toBe(false);
  });

  it("propagates the work's error and still releases", async () => {
    const id = uniqueId("run-exclusive-throws");
    const failure = new Error("work failed");
    await expect(
      new Lock({ id, redis }).runExclusive(() => {
        throw failure;
      }),
    ).rejects.toBe(failure);
    expect(await redis.exists(id)).toBe(0);
  });

  it("never masks the work's error, or result, with a failed release", async () => {
    // The real client, except that the release script fails as if Redis went away, whether it is
    // sent in full (its first use on this client) or by its SHA-1.
    const reset = () => Promise.reject(new Error("connection reset"));
    const failingRelease: EvalClient = {
      eval: (script, keys, args) =>
        script === releaseLock.source ? reset() : redis.eval(script, keys, args),
      evalsha: (digest, keys, args) =>
        digest === sha1(releaseLock.source) ? reset() : redis.evalsha(digest, keys, args),
    };
    const id = uniqueId("run-exclusive-release-fails");
    const lock = new Lock({ id, redis: failingRelease, lease: 2_000 });
    const failure = new Error("work failed");
    await expect(
      lock.runExclusive(() => {
        throw failure;
      }),
    ).rejects.toBe(failure);
    // The release did fail: the key is still there, until its lease would end.
    expect(await redis.exists(id)).toBe(1);
    await redis.del(id);
    // The instance's next caller waits for the turn until that lease's end (docs/api.md), then runs.
    expect(await lock.runExclusive(async () => "done", { timeout: 10_000 })).toBe("done");
    expect(await redis.exists(id)).toBe(1);
    await redis.del(id);
  });

  it("throws LockAcquisitionError without running the work when the lock is held", async () => {
    const id = uniqueId("run-exclusive-held");
    const holder = new Lock({ id, redis });
    await holder.acquire();
    const work = vi.fn();
    await expect(new Lock({ id, redis, retry: { attempts: 1 } }).runExclusive(work)).rejects.toMatchObject({
      name: "LockAcquisitionError",
    });
    expect(work).not.toHaveBeenCalled();
    await holder.release();
  });
});

describe("renewals never shorten what is left", () => {
  it("an extend() beyond the lease survives the renewals that follow it", async () => {
    const id = uniqueId("renew-keeps-extend");
    // The real client, counting the renewals that ran (answered) in Redis.
    let renewals = 0;
    const renew = sha1(renewLock.source);
    const counted = <T>(renewal: boolean, reply: Promise<T>): Promise<T> =>
      renewal
        ? reply.then((value) => {
            renewals += 1;
            return value;
          })
        : reply;
    const counting: EvalClient = {
      eval: (script, keys, args) => counted(script === renewLock.source, redis.eval(script, keys, args)),
      evalsha: (digest, keys, args) => counted(digest === renew, redis.evalsha(digest, keys, args)),
    };
    const lock = new Lock({ id, redis: counting, lease: 1_000, autoExtend: { interval: 100 } });
    await lock.acquireOrThrow();
    // Far beyond the lease: a renewal that shortened what is left would bring the key down to 1 s.
    expect(await lock.extend(20_000)).toBe(true);
    const since = renewals;
    // Four renewals ran after the extend, however slowly a loaded machine sends them.
    await waitUntil(() => renewals >= since + 4, "four renewals", { timeoutMs: 5_000 });
    const pttl = await redis.pttl(id);
    expect(pttl).toBeGreaterThan(10_000);
    expect(lock.remainingMs).toBeGreaterThan(10_000);
    await lock.release();
  });
});

describe("a lock seeded with a uuid", () => {
  it("starts holding when getStatus() confirms it: signal, remainingMs and auto-extend work", async () => {
    const id = uniqueId("seeded-hold");
    const uuid = crypto.randomUUID();
    // 2 s leases: the remainingMs check below keeps a 1 s margin for slow replies on a loaded machine.
    const origin = new Lock({ id, redis, lease: 2_000 });
    await origin.acquireOrThrow({ uuid });

    const seeded = new Lock({ id, redis, uuid, lease: 2_000, autoExtend: { interval: 100 } });
    expect(seeded.remainingMs).toBe(0);
    expect(await seeded.getStatus()).toBe("ACQUIRED");
    const signal = seeded.signal;
    expect(signal.aborted).toBe(false);
    expect(seeded.remainingMs).toBeGreaterThan(1_000);
    await pause(2_500); // past the original lease: only the seeded lock's renewals keep it
    expect(signal.aborted).toBe(false);
    expect(await redis.get(id)).toBe(uuid);
    expect(await seeded.release()).toBe(true);
    expect(signal.aborted).toBe(false); // released, not lost
  });

  it("starts holding when extend() confirms it, and reports a later loss", async () => {
    const id = uniqueId("seeded-extend");
    const uuid = crypto.randomUUID();
    await new Lock({ id, redis, lease: 5_000 }).acquireOrThrow({ uuid });
    const seeded = new Lock({ id, redis, uuid });
    // Added to the 5 s left: above 6 s only if extended, with seconds of margin for a loaded machine.
    expect(await seeded.extend(5_000)).toBe(true);
    expect(seeded.remainingMs).toBeGreaterThan(6_000);
    const signal = seeded.signal;
    await redis.del(id);
    expect(await seeded.getStatus()).toBe("FREE");
    expect(lossOf(signal).reason).toBe("taken");
  });
});
