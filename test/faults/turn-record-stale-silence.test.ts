// Review helper-178: the instance's record of the turn's silence (`erring.since`) outlived the turn-holder
// whose try Redis left unanswered. A caller's try cut off (by its timeout, or its signal) stayed in the
// record; the next caller took the turn and Redis answered its try; a third caller, which began after that
// answer and waited only for that healthy turn-holder (which sent nothing more while it waited), was told
// "another caller of this instance was acquiring it, and Redis did not answer", the silence dated from that
// answer. The turn's newest try was answered before it began: it waited for contention, nothing else.
import { describe, expect, it } from "vitest";
import { Lock, LockAcquisitionError } from "../../src/index";
import { uniqueId } from "../support/redis";
import { usePrivateStack, useWire } from "./support/endpoints";
import { settle } from "./support/settled";
import { pause, waitUntil, within } from "./support/time";
import { trackUnhandledRejections } from "./support/unhandled";

const stack = usePrivateStack();
const wire = useWire(() => stack().endpoint);
const unhandled = trackUnhandledRejections();

describe("a cut-off try of an earlier turn-holder, then a turn whose tries Redis answered", () => {
  it.each(["timeout", "signal"] as const)(
    "the first caller's try cut off by its %s: a caller that began after the next turn-holder's answer is told contention, with no silence",
    async (cutBy) => {
      const id = uniqueId(`turn-record-stale-${cutBy}`);
      const { direct, faulty, passThrough } = wire();
      const { stats, faults } = passThrough;
      await direct.set(id, "another holder", { px: 20_000 });
      const lock = new Lock({ id, redis: faulty, lease: 5_000, wakeOnRelease: false });
      const answeredBefore = stats.responses;
      // A: its first try finds the lock held; its second goes to Redis and is held back in the pass-through,
      // until its timeout (or signal) cuts it off: an unanswered try of the turn's.
      const controller = new AbortController();
      const first = settle(
        lock.acquire(
          cutBy === "timeout"
            ? { timeout: 1_500, retry: { delay: 200 } }
            : { signal: controller.signal, retry: { attempts: 5, delay: 200 } },
        ),
      );
      await waitUntil(() => stats.responses > answeredBefore, "A's first try answered");
      faults.delayNext(1, 4_000); // A's second try only: every later request passes at once
      // B: registered now, takes the turn when A ends; its first try is answered ("held"), then it waits.
      const second = settle(lock.acquireOrThrow({ timeout: 6_000, retry: { delay: 3_000 } }));
      const requestsBefore = stats.requests;
      await waitUntil(() => stats.requests > requestsBefore, "A's second try sent");
      if (cutBy === "signal") {
        await pause(100);
        controller.abort(new Error("A gives up"));
      }
      const a = await within(first, 5_000, "A");
      expect(a).toEqual(cutBy === "timeout" ? { value: false } : { error: new Error("A gives up") });
      const answeredA = stats.responses;
      await waitUntil(() => stats.responses > answeredA, "B's first try answered");
      await pause(100);
      // C: begins after Redis answered the turn's newest try; B sends nothing more while C waits.
      const requestsAtC = stats.requests;
      const third = await within(settle(lock.acquireOrThrow({ timeout: 800 })), 5_000, "C");
      expect(stats.requests).toBe(requestsAtC); // nothing went to Redis while C waited
      const failure = (third as { error?: unknown }).error;
      expect(failure).toBeInstanceOf(LockAcquisitionError);
      const told = failure as LockAcquisitionError;
      expect({
        reason: told.reason,
        cause: told.cause === undefined ? "none" : String((told.cause as Error).message),
        message: told.message.replace(/^.* ms: /, ""),
      }).toEqual({
        reason: "timeout",
        cause: "none",
        message: "the timeout ran out while another caller of this instance held it or was acquiring it",
      });
      controller.abort();
      const b = await within(second, 10_000, "B");
      expect((b as { error?: LockAcquisitionError }).error?.reason).toBe("timeout");
      await within(lock.pending, 10_000, "the undo of A's cut-off try");
      expect(await direct.get(id)).toBe("another holder");
      await direct.del(id);
      expect(unhandled()).toEqual([]);
    },
    30_000,
  );
});
