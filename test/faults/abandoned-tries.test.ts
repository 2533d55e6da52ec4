// Review helper-87 (2026-12-05), on tries the caller gave up on (abort, timeout):
// - an abort a microtask after the winning reply undid the win: `acquire()` resolved true (a Semaphore, a
//   permit), yet the hold was undone in the background, free for another owner (4/4 each; 3/3 on a quorum);
// - an undo that failed (an outage) was never sent again: the key stayed held for nobody for the lease (3/3);
// - a try Redis refused (it ran nothing) was undone anyway once abandoned (3/3).
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FairLock, type Lease, Lock, quorum, Semaphore } from "../../src/index";
import { readAll } from "../support/pass-through";
import { newRedis, uniqueId } from "../support/redis";
import { clientFor, sharedEndpoint, useWire } from "./support/endpoints";
import { forwardedHeaders } from "./support/recording";
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

/** An eval client that fails (never sending), passes, or holds (sending late) each call, in `plan`'s order. */
function scripted(plan: ("fail" | "pass" | "slow")[]) {
  const redis = newRedis();
  let calls = 0;
  const planned =
    (call: (...args: never[]) => Promise<unknown>) =>
    async (...args: never[]) => {
      const step = plan[calls++] ?? "pass";
      if (step === "fail") throw new Error("fetch failed");
      if (step === "slow") await pause(800); // lands after the waiter's leave
      return call(...args);
    };
  return {
    client: {
      eval: planned(redis.eval.bind(redis) as never),
      evalsha: planned(redis.evalsha.bind(redis) as never),
    },
    calls: () => calls,
  };
}

// Review helper-93 (2026-12-05), on this stop's first version, which left the line once: a waiter whose try
// failed unsent (no deadline kept), aborted with its next try in flight, left the line; that try, landing
// after, queued it again, and the holder's release handed the lock to nobody (6/6).
describe("a fair waiter aborted with a try in flight, its earlier try failed unsent", () => {
  for (const kind of ["FairLock", "fair Semaphore"] as const)
    it(`${kind}: is not left in line, and the next release serves a live caller`, async () => {
      const id = uniqueId("fair-abort-overtaken");
      const make = (redis: never, lease: number) =>
        kind === "FairLock"
          ? new FairLock({ id, redis, lease })
          : new Semaphore({ id, redis, lease, limit: 1, fair: true });
      const holder = make(newRedis() as never, 30_000);
      const held = await holder.acquire();
      expect(held).toBeTruthy();
      const { client, calls } = scripted(["fail", "pass", "slow"]);
      const waiter = make(client as never, 30_000);
      const controller = new AbortController();
      const waiting = waiter
        .acquire({ signal: controller.signal, retry: { attempts: Number.POSITIVE_INFINITY, delay: 100 } })
        .catch((error: Error) => error.message);
      await waitUntil(() => calls() >= 3, "the third try");
      await pause(50); // in flight
      controller.abort(new Error("stop"));
      expect(await waiting).toBe("stop");
      await pause(1_000); // the slow try landed
      await waiter.pending;
      expect(await wire().direct.zrange(`${id}:queue`, 0, -1)).toEqual([]);
      await (held === true ? (holder as FairLock) : (held as Lease)).release();
      const other = make(newRedis() as never, 5_000);
      const next = await other.acquire({ timeout: 1_500 });
      expect(next).toBeTruthy();
      await (next === true ? (other as FairLock) : (next as Lease)).release();
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

// Review helper-93 (2026-12-05), on this stop's re-sent undos: a quorum member that is down got each
// acquisition's undo 4 times, holding its background work (`pending`, a platform's `waitUntil`) 2.1 s (9/9).
describe("undos that cannot help", () => {
  /** A client whose every script call fails with `error`, counted. */
  const failing = (error: string) => {
    let calls = 0;
    const send = async () => {
      calls += 1;
      throw new Error(error);
    };
    return { client: { eval: send, evalsha: send }, calls: () => calls };
  };

  it("beside a quorum's majority: a member down gets one undo, not four", async () => {
    const down = failing("fetch failed");
    const id = uniqueId("quorum-member-down");
    const lock = new Lock({
      id,
      redis: quorum([newRedis(), newRedis(), down.client as never]),
      lease: 10_000,
    });
    expect(await lock.acquire()).toBe(true);
    await lock.pending;
    expect(down.calls()).toBe(2); // the take and its one undo
    expect(await lock.release()).toBe(true);
  }, 15_000);
});

// Review helper-95 (2026-12-05), on round two, which took an error reply (READONLY, a rate limit) for proof
// that nothing ran: a try whose first copy ran, its reply lost, and whose copy re-sent by the client got an
// error reply, was not undone (3/3 each); and an undo answered with one was not sent again (6/6): the key
// held for nobody for the lease both times.
describe("error replies of the moment", () => {
  type Step = "drop" | "readonly" | "pass";
  let plan: Step[] = [];
  let server: Server;
  let url = "";
  beforeAll(async () => {
    server = createServer((req, res) => {
      void (async () => {
        const body = (await readAll(req)).toString();
        const step = plan.shift() ?? "pass";
        if (step === "readonly") {
          res.writeHead(400, { "content-type": "application/json" });
          res.end(JSON.stringify({ error: "READONLY You can't write against a read only replica." }));
          return;
        }
        const reply = await fetch(sharedEndpoint().url + (req.url ?? "/"), {
          method: "POST",
          headers: forwardedHeaders(req),
          body,
        });
        const text = await reply.text();
        if (step === "drop") return void req.socket.destroy(); // it ran; its reply is lost
        res.writeHead(reply.status, { "content-type": "application/json" });
        res.end(text);
      })().catch(() => req.socket.destroy());
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  for (const [what, steps] of [
    ["a try that ran, its re-sent copy answered READONLY, is undone", ["drop", "readonly"]],
    ["an undo answered READONLY is sent again", ["drop", "drop", "readonly"]],
  ] as const)
    it(what, async () => {
      const id = uniqueId("error-reply-of-the-moment");
      const redis = clientFor({ url, token: sharedEndpoint().token });
      await new Lock({ id: `${id}:warm`, redis }).getStatus(); // its scripts cached: one request per call
      const lock = new Lock({ id, redis, lease: 10_000 });
      plan = [...steps];
      await expect(lock.acquire({ retry: { attempts: 1 } })).rejects.toMatchObject({
        name: "LockRedisError",
      });
      await lock.pending;
      expect(await wire().direct.exists(id)).toBe(0);
    }, 15_000);
});
