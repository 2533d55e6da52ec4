// Review of 2026-12-05 (helper-117, 4/4 each): a pause (GC, SIGSTOP) that lands right after a request left
// the process, before the library read the clock for it, made the lease count from after the pause: the
// holder's extend()/getStatus() said it held for another lease while another process held the key. Over ioredis the command is written to the socket synchronously inside the call, so a
// client wrapper that blocks right after the real call returns simulates that pause exactly.
import { Redis as IoRedis } from "ioredis";
import { afterAll, describe, expect, inject, it } from "vitest";
import { Lock, Semaphore } from "../../src/index";
import { uniqueId } from "../support/redis";

const opened: IoRedis[] = [];
afterAll(() => {
  for (const c of opened) c.disconnect();
});

const sab = new Int32Array(new SharedArrayBuffer(4));
const block = (ms: number) => Atomics.wait(sab, 0, 0, ms);

/** An ioredis client whose next eval/evalsha blocks the thread `pauseMs` right after it was sent. */
function pausingClient() {
  const real = new IoRedis(inject("redisUrl"));
  opened.push(real);
  const state = { pauseMs: 0 };
  const client = new Proxy(real, {
    get(target, key) {
      const value = Reflect.get(target, key, target);
      if ((key === "evalsha" || key === "eval") && typeof value === "function") {
        return (...args: unknown[]) => {
          const promise = value.apply(target, args); // written to the socket synchronously
          if (state.pauseMs > 0) {
            const ms = state.pauseMs;
            state.pauseMs = 0;
            block(ms);
          }
          return promise;
        };
      }
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
  return { client, state, real };
}

describe("a pause right after an extend()/getStatus() was sent (ioredis)", () => {
  it.each(["extend", "getStatus"] as const)(
    "Lock %s: the lease must not count from after the pause",
    async (call) => {
      const { client, state, real } = pausingClient();
      const id = uniqueId(`pause-${call}`);
      const lock = new Lock({ id, redis: client as never, lease: 1_000 });
      expect(await lock.acquire()).toBe(true);
      await lock.extend(0); // warm scripts
      await lock.getStatus();
      state.pauseMs = 1_500; // longer than what Redis's lease has left
      const answered = call === "extend" ? await lock.extend(100) : await lock.getStatus();
      // Redis's key expired during the pause: another process takes it now.
      const other = new Lock({ id, redis: real, lease: 5_000 });
      const otherGot = await other.acquire({ retry: { attempts: 1 } });
      const believes = { answered, remainingMs: lock.remainingMs, aborted: lock.signal.aborted };
      await other.release();
      await lock.release().catch(() => false);
      // Two holders at once: the other holds, while this one says it holds for about another lease.
      expect({ otherGot, believes }).toEqual({
        otherGot: true,
        believes: { answered: expect.anything(), remainingMs: 0, aborted: true },
      });
    },
  );

  it.each(["extend", "getStatus"] as const)(
    "Semaphore lease %s(): the lease must not count from after the pause",
    async (call) => {
      const { client, state, real } = pausingClient();
      const id = uniqueId(`pause-sem-${call}`);
      const sem = new Semaphore({ id, redis: client as never, limit: 1, lease: 1_000 });
      const lease = await sem.acquireOrThrow();
      await (call === "extend" ? lease.extend(0) : lease.getStatus()); // its script loaded
      state.pauseMs = 1_500;
      const answered = call === "extend" ? await lease.extend(100) : await lease.getStatus();
      const other = new Semaphore({ id, redis: real, limit: 1, lease: 5_000 });
      const otherLease = await other.acquire({ retry: { attempts: 1 } });
      const believes = { answered, remainingMs: lease.remainingMs, aborted: lease.signal.aborted };
      await otherLease?.release();
      await lease.release().catch(() => false);
      expect({ otherGot: otherLease !== undefined, believes }).toEqual({
        otherGot: true,
        believes: { answered: expect.anything(), remainingMs: 0, aborted: true },
      });
    },
  );

  it.each(["extend", "getStatus"] as const)(
    "Lock seeded with a uuid, confirmed by %s: the lease must not count from after the pause",
    async (call) => {
      const { client, state, real } = pausingClient();
      const id = uniqueId(`pause-seeded-${call}`);
      const uuid = crypto.randomUUID();
      const holder = new Lock({ id, redis: real, lease: 1_000 }); // the process that took it
      expect(await holder.acquire({ uuid })).toBe(true);
      const seeded = new Lock({ id, redis: client as never, uuid, lease: 1_000 });
      await new Lock({ id: uniqueId("warm"), redis: client as never }).getStatus(); // warm nothing much
      state.pauseMs = 1_500;
      const answered = call === "extend" ? await seeded.extend(0) : await seeded.getStatus();
      const other = new Lock({ id, redis: real, lease: 5_000 });
      const otherGot = await other.acquire({ retry: { attempts: 1 } });
      const believes = { answered, remainingMs: seeded.remainingMs, aborted: seeded.signal.aborted };
      await other.release();
      expect({ otherGot, believes }).toEqual({
        otherGot: true,
        believes: { answered: expect.anything(), remainingMs: 0, aborted: true },
      });
    },
  );
});
