// Review helper-178: a turn-holder's try that its own timeout cut off, after an earlier try of its had
// failed (a 503), ended its acquisition as "redis-error" with that old error, and the instance recorded that
// old error anew, as if it had come at the cut-off. A caller that began after the 503, and waited only while
// the turn's newest try went unanswered, then failed as an outage told by the 503 (which came before it
// began, so by the documented contract is not its error), where it should be told the silence it waited
// through ("another caller of this instance was acquiring it, and Redis did not answer").
import { describe, expect, it } from "vitest";
import { Lock, LockAcquisitionError } from "../../src/index";
import { uniqueId } from "../support/redis";
import { usePrivateStack, useWire } from "./support/endpoints";
import { settle, toldBy } from "./support/settled";
import { pause, waitUntil, within } from "./support/time";
import { trackUnhandledRejections } from "./support/unhandled";

const stack = usePrivateStack();
const wire = useWire(() => stack().endpoint);
const unhandled = trackUnhandledRejections();

describe("a turn-holder's error of before a caller began, then its try cut off by its own timeout", () => {
  it("the caller, which waited only while the turn's newest try went unanswered, is told that silence, not the old error", async () => {
    const id = uniqueId("turn-record-stale-error");
    const { direct, faulty, passThrough } = wire();
    const { stats, faults } = passThrough;
    await direct.set(id, "another holder", { px: 20_000 });
    const lock = new Lock({ id, redis: faulty, lease: 5_000, wakeOnRelease: false });
    const before = { requests: stats.requests, responses: stats.responses };
    faults.status5xx(1);
    // B: its first try is answered 503 (undone at once); its second is held back until its timeout cuts
    // it off: its acquisition ends as "redis-error", told by the 503.
    const b = settle(lock.acquire({ timeout: 1_200, retry: { delay: 400 } }));
    // C: waits for the turn and takes it when B ends (registered first, with one long wait).
    const c = settle(lock.acquire({ timeout: 2_500, retry: { delay: 5_000 } }));
    await waitUntil(() => stats.responses >= before.responses + 2, "B's 503, and the undo of that try");
    faults.delayNext(1, 3_000); // B's second try only
    await waitUntil(() => stats.requests >= before.requests + 3, "B's second try sent");
    await pause(50);
    // D: begins after the 503 and after B's second try went out; waits for the turn twice (B's, C's).
    const answeredAtD = stats.responses;
    const d = await within(settle(lock.acquireOrThrow({ retry: { attempts: 2, delay: 5_000 } })), 5_000, "D");
    const answeredDuringD = stats.responses - answeredAtD;
    const bOutcome = await within(b, 5_000, "B");
    expect(bOutcome.error).toMatchObject({ code: "LOCK_REDIS_ERROR" }); // B's own: the 503
    expect(answeredDuringD).toBe(0); // Redis answered nothing while D waited
    expect(d.error).toBeInstanceOf(LockAcquisitionError);
    expect(toldBy(d.error as LockAcquisitionError)).toEqual({
      reason: "held",
      cause: expect.stringMatching(/^Redis did not answer/),
      message:
        "another caller of this instance was acquiring it, and Redis did not answer (no reply within N ms)",
    });
    expect((await within(c, 10_000, "C")).value).toBe(false);
    await within(lock.pending, 10_000, "the undo of B's cut-off try");
    expect(await direct.get(id)).toBe("another holder");
    await direct.del(id);
    expect(unhandled()).toEqual([]);
  }, 30_000);

  it("after a turn passed on: a caller that began after the 503 is not told the next turn-holder's cut-off try as an outage", async () => {
    const id = uniqueId("turn-record-stale-error-passed");
    const { direct, faulty, passThrough } = wire();
    const { stats, faults } = passThrough;
    await direct.set(id, "another holder", { px: 20_000 });
    const lock = new Lock({ id, redis: faulty, lease: 5_000, wakeOnRelease: false });
    const before = stats.responses;
    faults.status5xx(1); // B's only try: answered 503 at once
    faults.latency(3_000); // every later request: no answer within the callers' timeouts
    const b = settle(lock.acquire({ retry: { attempts: 1 } }));
    // C began before the 503: that error came while it waited, so its own cut-off try ends it as an outage.
    const c = settle(lock.acquireOrThrow({ timeout: 1_500, retry: { delay: 5_000 } }));
    // W takes the turn when C ends.
    const w = settle(lock.acquire({ timeout: 2_500, retry: { delay: 5_000 } }));
    await waitUntil(() => stats.responses > before, "B's 503");
    await pause(50);
    // D: begins after the 503, while C's try is out unanswered; waits for the turn twice (C's, W's).
    const answeredAtD = stats.responses;
    const d = await within(settle(lock.acquireOrThrow({ retry: { attempts: 2, delay: 5_000 } })), 5_000, "D");
    expect(stats.responses - answeredAtD).toBe(0); // Redis answered nothing while D waited
    expect((await within(b, 5_000, "B")).error).toMatchObject({ code: "LOCK_REDIS_ERROR" });
    expect((await within(c, 5_000, "C")).error).toMatchObject({ reason: "redis-error" });
    expect(d.error).toBeInstanceOf(LockAcquisitionError);
    const told = d.error as LockAcquisitionError;
    expect({
      reason: told.reason,
      message: told.message.replace(/^.* ms: /, "").replace(/\d+ ms/, "N ms"),
    }).toEqual({
      reason: "held",
      message:
        "another caller of this instance was acquiring it, and Redis did not answer (no reply within N ms)",
    });
    await within(w, 10_000, "W");
    faults.reset();
    await within(lock.pending, 10_000, "the undo of the cut-off tries");
    expect(await direct.get(id)).toBe("another holder");
    await direct.del(id);
    expect(unhandled()).toEqual([]);
  }, 30_000);
});
