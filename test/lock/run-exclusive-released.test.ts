// runExclusive's work, when another caller of the same Lock releases its hold through the instance (review
// helper-52, 2026-12-04): a caller sharing its uuid, or one whose own lease ran out, calls `lock.release()`,
// which acts on the current lease, the work's. The hold ended under the work, but its signal stayed live
// while another process took the lock: two holders. The work's signal now aborts ("taken").
import { describe, expect, it } from "vitest";
import { Lock, type LockLostError } from "../../src/index";
import { clientFor, sharedEndpoint } from "../faults/support/endpoints";
import { uniqueId } from "../support/redis";

describe("runExclusive's hold released through the instance by another caller", () => {
  it.each(["lock.release()", "await using"])(
    "a caller sharing its uuid, by %s: the work's signal aborts as taken",
    async (how) => {
      const redis = clientFor(sharedEndpoint());
      const id = uniqueId("exclusive-released");
      const uuid = crypto.randomUUID();
      const lock = new Lock({ id, redis, lease: 10_000 });
      const other = new Lock({ id, redis, lease: 10_000 });
      expect(await lock.acquire({ uuid })).toBe(true); // caller A
      const seen = await lock.runExclusive(
        async (signal) => {
          // Caller B took A's hold over (one uuid, one hold); A is done and releases "its" lock.
          if (how === "await using") await lock[Symbol.asyncDispose]();
          else expect(await lock.release()).toBe(true);
          const otherHolds = await other.acquire({ retry: { attempts: 1 } });
          return { otherHolds, aborted: signal.aborted, reason: (signal.reason as LockLostError)?.reason };
        },
        { uuid },
      );
      expect(seen).toEqual({ otherHolds: true, aborted: true, reason: "taken" });
      expect(await other.release()).toBe(true);
    },
  );

  it("its own end releases without reporting a loss", async () => {
    const redis = clientFor(sharedEndpoint());
    const lost: unknown[] = [];
    const lock = new Lock({ id: uniqueId("exclusive-own-end"), redis, onLost: (error) => lost.push(error) });
    let signal: AbortSignal | undefined;
    await lock.runExclusive((given) => {
      signal = given;
    });
    expect({ aborted: signal?.aborted, lost, held: lock.remainingMs }).toEqual({
      aborted: false,
      lost: [],
      held: 0,
    });
  });
});
