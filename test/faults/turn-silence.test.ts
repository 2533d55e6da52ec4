// Review helper-140 (stop 51, 5/5): three callers of one Lock. The first's first try found the lock held,
// then Redis went silent: its second try was cut off by its timeout. The second caller then took the turn and
// sent a try, also unanswered; the third only waited for the turn, from after the first's silent try went out.
// The third failed as "held", with no cause: the instance remembered only when the turn's newest try went
// (the second caller's, after the third began), so the silence of the first caller's try, still unanswered,
// was forgotten once that caller's wait ended. The silence lasts until Redis answers one of the turn's tries.
import { describe, expect, it } from "vitest";
import { Lock, LockAcquisitionError, LockRedisError } from "../../src/index";
import { uniqueId } from "../support/redis";
import { usePrivateStack, useWire } from "./support/endpoints";
import { pause, waitUntil } from "./support/time";

const stack = usePrivateStack();
const wire = useWire(() => stack().endpoint);

describe("a caller that only waited for the turn while Redis answered none of the turn's tries", () => {
  it("is told of the silence, after the turn passed from a caller whose try was cut off", async () => {
    const id = uniqueId("turn-silence");
    await wire().direct.set(id, "another holder", { px: 10_000 });
    const lock = new Lock({ id, redis: wire().faulty, lease: 3_000 });
    const { stats, faults } = wire().passThrough;
    const answered = stats.responses;
    const first = lock.acquire({ timeout: 1_000, retry: { delay: 100 } });
    await waitUntil(() => stats.responses > answered, "the first try answered");
    faults.latency(3_000); // Redis silent from now on: the first caller's next try goes unanswered
    // Registered before the third, so it takes the turn when the first caller's wait ends, and sends a try.
    const second = lock.acquireOrThrow({ timeout: 2_500, retry: { delay: 1_000 } }).catch((e: unknown) => e);
    await pause(300); // the first caller's second try is out
    const third = await lock
      .acquireOrThrow({ retry: { attempts: 3, delay: 500 } })
      .catch((error: unknown) => error);
    const results = [await first, await second];
    faults.reset();
    expect(results).toEqual([false, expect.any(LockAcquisitionError)]);
    expect(third).toBeInstanceOf(LockAcquisitionError);
    const failure = third as LockAcquisitionError;
    expect({
      reason: failure.reason,
      cause: failure.cause instanceof LockRedisError,
      message: /was acquiring it, and Redis did not answer/.test(failure.message),
    }).toEqual({ reason: "held", cause: true, message: true });
    await lock.pending;
  }, 15_000);
});
