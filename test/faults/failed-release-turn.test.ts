// A shared Lock handed its turn on when a release() threw, though Redis had not answered it (review
// helper-27). docs/api.md says to call release() again; if the failed release ran (its reply lost), the
// next caller took the lock at once, and the first caller's retry (or its `await using`) released "the
// current lease": the next caller's. The turn now passes at the lease's end, unless a retry is answered.
import { describe, expect, it } from "vitest";
import { Lock } from "../../src/index";
import { uniqueId } from "../support/redis";
import { sharedEndpoint, useWire } from "./support/endpoints";
import { pause, within } from "./support/time";

const wire = useWire(() => sharedEndpoint());

describe("a shared Lock whose release() threw", () => {
  it("retrying release() as documented leaves the next caller's hold alone", async () => {
    const id = uniqueId("failed-release-turn");
    const lock = new Lock({ id, redis: wire().faulty, lease: 5_000 });
    expect(await lock.acquire()).toBe(true);
    let bSignal: AbortSignal | undefined;
    const b = lock.acquire({ timeout: 4_000, retry: { delay: 50 } }).then((ok) => {
      bSignal = lock.signal;
      return ok;
    });
    await pause(20);
    // A's release runs in Redis; its reply is lost (the client throws).
    wire().passThrough.faults.dropReplies(2);
    const firstError = await lock.release().then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(firstError).toBeInstanceOf(Error);
    await pause(100); // A backs off, then retries as docs/api.md says
    const retried = await lock.release().catch(() => "threw");
    const bGot = await within(b, 5_000, "B's acquire");
    const other = new Lock({ id, redis: wire().direct, lease: 1_000 });
    const otherGotIt = await other.acquire({ retry: { attempts: 1 } });
    await other.release();
    await lock.release().catch(() => false);
    expect({ retried, bGot, bSignalAborted: bSignal?.aborted, otherGotIt }).toEqual({
      retried: false,
      bGot: true,
      bSignalAborted: false,
      otherGotIt: false,
    });
  });

  it("await using after a caught release() error leaves the next caller's hold alone", async () => {
    const id = uniqueId("failed-release-dispose");
    const lock = new Lock({ id, redis: wire().faulty, lease: 5_000 });
    let b: Promise<boolean> | undefined;
    let bSignal: AbortSignal | undefined;
    {
      await using held = await lock.acquireOrThrow();
      b = lock.acquire({ timeout: 4_000, retry: { delay: 50 } }).then((ok) => {
        bSignal = lock.signal;
        return ok;
      });
      await pause(20);
      wire().passThrough.faults.dropReplies(2);
      try {
        await held.release();
      } catch {
        await pause(50); // e.g. logging the error somewhere
      }
    }
    const bGot = await within(b, 5_000, "B's acquire");
    const other = new Lock({ id, redis: wire().direct, lease: 1_000 });
    const otherGotIt = await other.acquire({ retry: { attempts: 1 } });
    await other.release();
    await lock.release().catch(() => false);
    expect({ bGot, bSignalAborted: bSignal?.aborted, otherGotIt }).toEqual({
      bGot: true,
      bSignalAborted: false,
      otherGotIt: false,
    });
  });
});

describe("a shared Lock whose release failed where nobody can retry it", () => {
  // Review helper-52 (2026-12-04): runExclusive and `await using` swallow a failed release, yet the instance
  // kept its turn for the rest of the lease, for a retry that never comes: the next caller was refused
  // ("another caller of this instance held it") though Redis was free.
  it.each(["runExclusive", "await using"])("%s: the next caller goes to Redis at once", async (how) => {
    const id = uniqueId("failed-release-no-retry");
    const lock = new Lock({ id, redis: wire().faulty, lease: 5_000 });
    const work = async () => {
      wire().passThrough.faults.dropReplies(2); // the release and its re-sent copy run; both replies lost
    };
    if (how === "runExclusive") await lock.runExclusive(work);
    else {
      await using held = await lock.acquireOrThrow();
      await work();
      expect(held.remainingMs).toBeGreaterThan(0);
    }
    expect(await wire().direct.exists(id)).toBe(0); // Redis is free
    expect(await lock.acquire({ retry: { attempts: 1 } })).toBe(true);
    expect(await lock.release()).toBe(true);
  });

  it.each(["refused", "ran, its reply lost", "answered late"])(
    "another caller's release through the instance (%s) aborts runExclusive's signal as it is sent",
    async (fault) => {
      // Review helpers 53 and 55 (2026-12-04): reported only once answered true, a release that ran but
      // whose reply was lost, or came late, left the work's signal live while another process held; and one
      // refused ended the lease here (no renewals) with no loss reported when its hold ran out.
      const id = uniqueId("exclusive-other-release");
      const lost: unknown[] = [];
      const lock = new Lock({ id, redis: wire().faulty, lease: 5_000, onLost: (error) => lost.push(error) });
      const { faults } = wire().passThrough;
      const seen = await lock.runExclusive(async (signal) => {
        if (fault === "refused") faults.refuse(2);
        else if (fault === "answered late") faults.delayRepliesNext(1, 1_000);
        else faults.dropReplies(2); // the release, and the client's re-send of it
        const answer = lock.release().catch((error: Error) => error.name);
        const abortedAtOnce = signal.aborted;
        return { abortedAtOnce, answer: await answer };
      });
      expect({ seen, lost: lost.length }).toEqual({
        seen: {
          abortedAtOnce: true,
          answer: fault === "answered late" ? true : "LockRedisError",
        },
        lost: 1,
      });
    },
  );

  it("a release through the instance in flight when runExclusive ends, failing: its caller's retry leaves the next caller's hold", async () => {
    // Review helper-55 (2026-12-04): runExclusive's own release joined that one, and its failure handed the
    // turn on at once, so the next caller took the lock, and the first caller's documented retry ended it.
    const id = uniqueId("exclusive-end-joins-release");
    const lock = new Lock({ id, redis: wire().faulty, lease: 5_000 });
    let next: Promise<boolean> | undefined;
    let nextSignal: AbortSignal | undefined;
    let retried: Promise<unknown> | undefined;
    await lock.runExclusive(async () => {
      next = lock.acquire({ timeout: 4_000, retry: { delay: 50 } }).then((ok) => {
        nextSignal = lock.signal;
        return ok;
      });
      await pause(20);
      wire().passThrough.faults.dropReplies(2); // the release runs; its reply, and its re-send's, are lost
      retried = lock.release().catch(async () => {
        await pause(100);
        return lock.release().catch(() => "threw"); // as docs/api.md says to
      });
    });
    const nextGot = await within(next as Promise<boolean>, 5_000, "the next caller's acquire");
    const retry = await retried;
    const other = new Lock({ id, redis: wire().direct, lease: 1_000 });
    const otherGotIt = await other.acquire({ retry: { attempts: 1 } });
    await other.release();
    await lock.release().catch(() => false);
    expect({ nextGot, retry, nextSignalAborted: nextSignal?.aborted, otherGotIt }).toEqual({
      nextGot: true,
      retry: false,
      nextSignalAborted: false,
      otherGotIt: false,
    });
  });
});
