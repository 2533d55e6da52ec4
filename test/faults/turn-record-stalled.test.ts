// Review helper-179: a turn-holder's try that this process stalled over (its event loop blocked past the
// try's bound, the try unanswered) cleared the instance's record of the turn's error: a 503 that Redis gave
// the turn-holder's previous try, while another caller of the instance waited for the turn. That caller,
// Redis answering nothing more until it gave up, was then told plain contention ("timeout", no cause): the
// outage it waited through went untold. A stall of this process is no answer of Redis's.
import { describe, expect, it } from "vitest";
import { Lock, LockAcquisitionError, LockRedisError } from "../../src/index";
import { uniqueId } from "../support/redis";
import { usePrivateStack, useWire } from "./support/endpoints";
import { settle } from "./support/settled";
import { now, waitUntil, within } from "./support/time";
import { trackUnhandledRejections } from "./support/unhandled";

const stack = usePrivateStack();
const wire = useWire(() => stack().endpoint);
const unhandled = trackUnhandledRejections();

/** Blocks this process for `ms`, as a long GC pause would. */
function stall(ms: number): void {
  const end = now() + ms;
  while (now() < end) {
    // busy
  }
}

describe("a 503 to the turn-holder's try while a caller waits, then a try of the turn-holder's this process stalled over", () => {
  it("the caller, Redis answering nothing after the 503 until it gave up, is told the 503, not contention", async () => {
    const id = uniqueId("turn-record-stalled");
    const { direct, faulty, passThrough } = wire();
    const { stats, faults } = passThrough;
    await direct.set(id, "another holder", { px: 20_000 });
    const lock = new Lock({ id, redis: faulty, lease: 5_000, wakeOnRelease: false });
    const answeredBefore = stats.responses;
    // T: has the turn; tries every 300 ms with a 2 s lease (each try bounded a little under 2 s). The windows
    // below are about a second wide each side, so a loaded machine's lag does not reorder them.
    const t = settle(lock.acquire({ lease: 2_000, timeout: 15_000, retry: { delay: 300 } }));
    await waitUntil(() => stats.responses > answeredBefore, "T's first try answered");
    // W: waits for the turn only, from before the 503.
    // It gives up after T's stall (about 4 s in) and before T's try sent again runs past its bound (about 6 s).
    let wSettled = false;
    const w = settle(lock.acquireOrThrow({ timeout: 5_000, retry: { delay: 10_000 } })).finally(() => {
      wSettled = true;
    });
    faults.status5xx(1); // T's second try
    await waitUntil(() => stats.responses >= answeredBefore + 3, "the 503, and the undo of that try");
    expect(wSettled).toBe(false); // the 503 came while W waited
    faults.delayNext(2, 5_000); // T's third try, and the one it sends again: unanswered past W's wait
    const requestsAt = stats.requests;
    await waitUntil(() => stats.requests > requestsAt, "T's third try sent", { intervalMs: 1 });
    stall(3_300); // past 1.5 times that try's bound and 50 ms (`overdue`): this process stalled with it out
    const stallEnded = now();
    const answeredAfterStall = stats.responses;
    const outcome = await within(w, 5_000, "W");
    expect(now() - stallEnded).toBeGreaterThan(100); // W gave up after T read its try as stalled
    expect(stats.responses).toBe(answeredAfterStall); // Redis answered nothing after the 503 and its undo
    expect(outcome.error).toBeInstanceOf(LockAcquisitionError);
    const told = outcome.error as LockAcquisitionError;
    expect({
      reason: told.reason,
      cause: told.cause instanceof LockRedisError ? "LockRedisError" : String(told.cause),
    }).toEqual({ reason: "redis-error", cause: "LockRedisError" });
    faults.reset();
    await within(t, 10_000, "T");
    await within(lock.pending, 15_000, "the undo of T's tries");
    expect(await direct.get(id)).toBe("another holder");
    await direct.del(id);
    expect(unhandled()).toEqual([]);
  }, 40_000);
});
