// Review helper-87 (2026-12-05), on tries the caller gave up on (abort, timeout):
// - an abort a microtask after the winning reply undid the win: `acquire()` resolved true (a Semaphore, a
//   permit), yet the hold was undone in the background, free for another owner (4/4 each; 3/3 on a quorum);
// - an undo that failed (an outage) was never sent again: the key stayed held for nobody for the lease (3/3);
// - a fair waiter in line, aborted with a try in flight, left the line twice (3/3);
// - a try Redis refused (it ran nothing) was undone anyway once abandoned (3/3).
import { describe, expect, it } from "vitest";
import { FairLock, type Lease, Lock, Semaphore } from "../../src/index";
import { newRedis, uniqueId } from "../support/redis";
import { sharedEndpoint, useWire } from "./support/endpoints";
import { pause, waitUntil } from "./support/time";
import { trackUnhandledRejections } from "./support/unhandled";

const wire = useWire(sharedEndpoint);
const unhandled = trackUnhandledRejections();

/** Runs `then` after `n` microtask hops. */
function hops(n: number, then: () => void): void {
  if (n === 0) then();
  else queueMicrotask(() => hops(n - 1, then));
}

/** An eval client that calls `onReply` right after its first reply resolves. */
function replyHook(onReply: () => void) {
  const redis = newRedis();
  let first = true;
  const hooked =
    (call: (...args: never[]) => Promise<unknown>) =>
    async (...args: never[]) => {
      const reply = await call(...args);
      if (first) {
        first = false;
        onReply();
      }
      return reply;
    };
  return {
    eval: hooked(redis.eval.bind(redis) as never),
    evalsha: hooked(redis.evalsha.bind(redis) as never),
  };
}

describe("an abort a few microtasks after the winning reply", () => {
  for (const kind of ["Lock", "Semaphore"] as const)
    it(`${kind}: an acquisition that resolved as held stays held`, async () => {
      const undone: number[] = [];
      for (let depth = 0; depth < 16; depth++) {
        const id = uniqueId("abort-after-win");
        const controller = new AbortController();
        const redis = replyHook(() => hops(depth, () => controller.abort(new Error("late abort")))) as never;
        const options = { id, redis, lease: 10_000 };
        const lock = kind === "Lock" ? new Lock(options) : new Semaphore({ ...options, limit: 1 });
        const held = await lock.acquire({ signal: controller.signal }).catch(() => undefined);
        if (!held) continue; // the abort came first: rejected, nothing held
        const lease = held === true ? (lock as Lock) : held;
        await lock.pending;
        if ((await lease.getStatus()) !== "ACQUIRED") undone.push(depth);
        await lease.release();
      }
      expect(undone).toEqual([]);
    }, 30_000);
});

describe("an undo that failed", () => {
  for (const end of ["timeout", "abort"] as const)
    it(`after a ${end}: it is sent again, and the key is freed`, async () => {
      const id = uniqueId("undo-fails");
      const lock = new Lock({ id, redis: wire().faulty, lease: 8_000 });
      wire().passThrough.faults.delayRepliesNext(1, 800); // the try runs; its answer comes after the caller left
      const controller = new AbortController();
      const timer = setTimeout(() => controller.abort(new Error("stop")), 300);
      const result = await lock
        .acquire(end === "timeout" ? { timeout: 300 } : { signal: controller.signal })
        .catch((error: Error) => error.name);
      clearTimeout(timer);
      // A try unanswered when the time ran out: Redis's silence, not contention.
      expect(result).toBe(end === "timeout" ? "LockRedisError" : "Error");
      wire().passThrough.faults.status5xx(1); // the undo, sent once the late answer lands, fails
      await waitUntil(async () => (await wire().direct.exists(id)) === 0, "the key freed", {
        timeoutMs: 4_000,
      });
      await lock.pending;
      expect(unhandled()).toEqual([]);
    }, 15_000);
});

describe("a fair waiter aborted with a try in flight", () => {
  for (const kind of ["FairLock", "fair Semaphore"] as const)
    it(`${kind}: leaves the line with one request`, async () => {
      const id = uniqueId("fair-abort-leave");
      const make = (redis: never) =>
        kind === "FairLock"
          ? new FairLock({ id, redis, lease: 30_000 })
          : new Semaphore({ id, redis, limit: 1, lease: 30_000, fair: true });
      const holder = make(wire().direct as never);
      const held = await holder.acquire();
      expect(held).toBeTruthy();
      const waiter = make(wire().faulty as never);
      const controller = new AbortController();
      // Commands only: a fair waiter over @upstash/redis also subscribes to hear its turn.
      const commands = () =>
        (wire().passThrough.stats.byPath["/"] ?? 0) + (wire().passThrough.stats.byPath["/pipeline"] ?? 0);
      const before = commands();
      const waiting = waiter
        .acquire({ signal: controller.signal, retry: { attempts: Number.POSITIVE_INFINITY, delay: 200 } })
        .catch((error: Error) => error.message);
      await waitUntil(() => commands() > before, "the first try");
      await pause(50); // answered: in line
      wire().passThrough.faults.latency(500);
      await waitUntil(() => commands() > before + 1, "the second try"); // in flight
      const sent = commands();
      controller.abort(new Error("stop"));
      expect(await waiting).toBe("stop");
      await pause(1_000); // the second try's answer lands
      await waiter.pending;
      expect(commands() - sent).toBe(1); // the leave
      expect(await wire().direct.zcard(`${id}:queue`)).toBe(0);
      await (held === true ? (holder as FairLock) : (held as Lease)).release();
    }, 15_000);
});

describe("a try Redis refused", () => {
  it("is not undone once abandoned: it ran nothing", async () => {
    const id = uniqueId("refused-abandoned");
    await wire().direct.hset(id, { field: "1" }); // the take fails: WRONGTYPE
    const lock = new Lock({ id, redis: wire().faulty, lease: 5_000 });
    wire().passThrough.faults.delayRepliesNext(1, 600);
    const before = wire().requests();
    await expect(lock.acquire({ timeout: 200 })).rejects.toMatchObject({ name: "LockRedisError" });
    await pause(900);
    await lock.pending;
    expect(wire().requests() - before).toBe(1);
    await wire().direct.del(id);
  }, 10_000);
});
