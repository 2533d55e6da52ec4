// One Lock shared by concurrent callers (a second acquire() waits for the first to end), review helper-23.
// Caller A uses `await using held = await lock.acquireOrThrow()` and calls `release()` itself to know the
// answer (as docs/api.md advises). A's release ended its turn before Redis answered, so B's waiting acquire
// took the lock while A's release reply was on the wire; A's block then ended, and disposal released "the
// current lease": B's. B still believed it held (signal live) while a third process took the lock.
import { describe, expect, it } from "vitest";
import { FairLock, Lock } from "../../src/index";
import { uniqueId } from "../support/redis";
import { sharedEndpoint, useWire } from "./support/endpoints";
import { pause, waitUntil } from "./support/time";

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

// Review helper-78 (2026-12-05): the fix above kept A's turn only until Redis answered its release, so any
// `await` between A's `release()` and the end of its block let B acquire first, and A's disposal released
// B's lease (4/4, Lock and FairLock alike). The lock `acquireOrThrow()` resolves with now disposes of the
// lease that call acquired, never a later caller's.
describe.each([Lock, FairLock])(
  "%o shared by two callers: await using after release() and an await",
  (Kind) => {
    it("leaves the next caller's hold alone", async () => {
      const id = uniqueId("shared-dispose-await");
      const lock = new Kind({ id, redis: wire().direct, lease: 5_000 });
      let bSignal: AbortSignal | undefined;
      let bHolds: Promise<boolean> | undefined;
      {
        await using held = await lock.acquireOrThrow();
        bHolds = lock.acquire({ retry: { attempts: 20, delay: 50 } }).then((ok) => {
          bSignal = lock.signal;
          return ok;
        });
        await pause(20);
        expect(await held.release()).toBe(true);
        await expect(bHolds).resolves.toBe(true); // B holds before A's block ends
      } // disposal
      const other = new Lock({ id, redis: wire().direct, lease: 1_000 });
      const otherGotIt = await other.acquire({ retry: { attempts: 1 } });
      if (otherGotIt) await other.release();
      expect({ bSignalAborted: bSignal?.aborted, otherGotIt }).toEqual({
        bSignalAborted: false,
        otherGotIt: false,
      });
      expect(await lock.release()).toBe(true); // B's release, still B's hold
    });

    it("after its lease was lost, leaves the next caller's hold alone", async () => {
      const id = uniqueId("shared-dispose-lost");
      const lock = new Kind({ id, redis: wire().direct, lease: 3_000 });
      let b: Promise<boolean> | undefined;
      {
        await using held = await lock.acquireOrThrow({ autoExtend: { interval: 100 } });
        const { signal } = held;
        await wire().direct.del(id); // an operator, or a failover: the renewal finds it gone
        await waitUntil(() => signal.aborted, "A's loss");
        b = lock.acquire({ timeout: 3_000 });
        await expect(b).resolves.toBe(true);
      } // disposal
      expect(lock.signal.aborted).toBe(false);
      expect(await lock.getStatus()).toBe("ACQUIRED"); // still B's hold
      expect(await lock.release()).toBe(true);
    });

    it("still releases its own lease when nobody acquired after it", async () => {
      const id = uniqueId("shared-dispose-own");
      const lock = new Kind({ id, redis: wire().direct, lease: 5_000 });
      {
        await using held = await lock.acquireOrThrow();
        expect(held.id).toBe(id);
        expect(held).toBeInstanceOf(Kind);
      }
      expect(await wire().direct.exists(id)).toBe(0);
    });
  },
);
