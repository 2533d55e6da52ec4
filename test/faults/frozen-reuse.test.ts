// Review of 2026-12-05 (helper-117, 3/3): one instance reused across "invocations". The first acquires and
// does not release, the process freezes (event loop blocked) past the lease, and the next invocation acquires
// on the same instance in the thaw's first tick, before any timer ran. It waited for the turn of the expired
// lease, spending its one attempt, and answered false though Redis was free.
import { Redis as IoRedis } from "ioredis";
import { afterAll, describe, expect, inject, it } from "vitest";
import { FairLock, Lock, type RedisClient } from "../../src/index";
import { uniqueId } from "../support/redis";
import { clientFor, sharedEndpoint } from "./support/endpoints";
import { trackUnhandledRejections } from "./support/unhandled";

const unhandled = trackUnhandledRejections();
const opened: IoRedis[] = [];
afterAll(() => {
  for (const client of opened) client.disconnect();
});
const sab = new Int32Array(new SharedArrayBuffer(4));
const block = (ms: number) => Atomics.wait(sab, 0, 0, ms);
const clients: Record<string, () => RedisClient> = {
  upstash: () => clientFor(sharedEndpoint()),
  ioredis: () => {
    const c = new IoRedis(inject("redisUrl"));
    opened.push(c);
    return c;
  },
};

describe.each(Object.keys(clients))("%s", (name) => {
  it.each([
    ["lock", {}],
    ["lock", { autoExtend: true }],
    ["fair", {}],
  ] as const)(
    "%s %j: not released, frozen past the lease, acquired again at once with one attempt",
    async (kind, extra) => {
      const id = uniqueId(`reuse-${kind}`);
      const opts = { id, redis: (clients[name] as () => RedisClient)(), lease: 800, ...extra };
      const lock = kind === "fair" ? new FairLock(opts) : new Lock(opts);
      expect(await lock.acquire()).toBe(true);
      block(1_500); // frozen between invocations; the lease ran out in Redis
      const again = await lock.acquire({ retry: { attempts: 1 } }); // in the thaw's first tick
      const state = { again, remaining: lock.remainingMs > 300, aborted: lock.signal.aborted };
      await lock.release();
      expect({ state, unhandled: unhandled() }).toEqual({
        state: { again: true, remaining: true, aborted: false },
        unhandled: [],
      });
    },
    20_000,
  );
});
