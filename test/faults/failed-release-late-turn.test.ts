// A shared Lock whose release() throws keeps the instance's turn until the lease's end (docs/api.md), review
// helper-29: the hand-over timer was armed when the error arrived, for what was left of the lease when the
// release started, so a release failing late in the lease kept the next caller waiting up to a second
// lease, with the key long expired and nothing of the first caller live.
import { describe, expect, it } from "vitest";
import { Lock } from "../../src/index";
import { uniqueId } from "../support/redis";
import { clientFor, sharedEndpoint } from "./support/endpoints";
import { pause, within } from "./support/time";

describe("a shared Lock whose release() fails late", () => {
  it("hands its turn on at the lease's end, not a lease after the error", async () => {
    const direct = clientFor(sharedEndpoint());
    let failNextAfter: number | undefined;
    // A generic eval client: the next request, once armed, fails after a delay without reaching Redis.
    const client = {
      eval: async (script: string, keys: string[], args: (string | number)[]) => {
        const delay = failNextAfter;
        failNextAfter = undefined;
        if (delay !== undefined) {
          await pause(delay);
          throw new Error("fetch failed (connect ECONNREFUSED)");
        }
        return direct.eval(script, keys, args);
      },
    };
    const id = uniqueId("late-failed-release");
    const lock = new Lock({ id, redis: client, lease: 3_000 });
    expect(await lock.acquire()).toBe(true);
    const start = performance.now();
    // Within 4.5 s: the turn passes at the lease's end (about 3 s); timed from the error, it came near 5 s.
    const b = lock.acquire({ timeout: 4_500, retry: { attempts: 10_000, delay: 50 } });
    await pause(20);
    failNextAfter = 2_000;
    const error = await lock.release().then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(Error);
    await pause(Math.max(0, start + 3_100 - performance.now()));
    // The lease is over: Redis has expired A's key (any key now is B's).
    const keyAfterLease = (await direct.exists(id)) === 0 ? "free" : "held";
    const bGot = await within(b, 8_000, "B's acquire");
    const bAt = Math.round(performance.now() - start);
    await lock.release().catch(() => false);
    expect(bGot, `B settled at ${bAt} ms; the key at 3100 ms: ${keyAfterLease}`).toBe(true);
  });
});
