// One Lock shared by concurrent callers (a second acquire() waits for the first to end), review helper-23.
// Caller A uses `await using held = await lock.acquireOrThrow()` and calls `release()` itself to know the
// answer (as docs/api.md advises). A's release ended its turn before Redis answered, so B's waiting acquire
// took the lock while A's release reply was on the wire; A's block then ended, and disposal released "the
// current lease": B's. B still believed it held (signal live) while a third process took the lock.
import { describe, expect, it } from "vitest";
import { Lock } from "../../src/index";
import { uniqueId } from "../support/redis";
import { sharedEndpoint, useWire } from "./support/endpoints";
import { pause } from "./support/time";

const wire = useWire(() => sharedEndpoint());

describe("await using on a Lock shared by two callers, after an explicit release()", () => {
  it("leaves the next caller's hold alone", async () => {
    const id = uniqueId("shared-dispose");
    const lock = new Lock({ id, redis: wire().faulty, lease: 5_000 });
    let bHolds: Promise<boolean> | undefined;
    let bSignal: AbortSignal | undefined; // what B reads right after its acquire, as the README shows
    {
      await using held = await lock.acquireOrThrow();
      // B, another request handler on the same module-level Lock, waits for A's turn.
      bHolds = lock.acquire({ retry: { attempts: 20, delay: 50 } }).then((ok) => {
        bSignal = lock.signal;
        return ok;
      });
      await pause(20);
      // A's release runs in Redis at once; its reply takes 400 ms to come back.
      wire().passThrough.faults.delayRepliesNext(1, 400);
      expect(await held.release()).toBe(true);
    } // disposal
    expect(await bHolds).toBe(true);
    const other = new Lock({ id, redis: wire().direct, lease: 1_000 });
    const otherGotIt = await other.acquire({ retry: { attempts: 1 } });
    await other.release();
    // B was never told (its signal is live), yet a stranger got the lock: two holders.
    expect({ bSignalAborted: bSignal?.aborted, otherGotIt }).toEqual({
      bSignalAborted: false,
      otherGotIt: false,
    });
    await lock.release();
  });
});
