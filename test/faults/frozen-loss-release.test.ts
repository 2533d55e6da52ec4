// Redis frozen past the lease while an auto-extend renewal is in flight (review helper-98): the lease is
// reported lost, and the library sends a release of what that renewal may renew once Redis wakes. A
// `release()` of the caller's meanwhile (the end of runExclusive, `await using`) shares that request, yet
// must not wait for it: nothing is left of the lease, so it answers `false` at once, as any release past
// the lease does. It waited as long as Redis stayed frozen.
import { Redis as IoRedis } from "ioredis";
import { afterEach, describe, expect, it } from "vitest";
import { Lock, type RedisClient, Semaphore } from "../../src/index";
import { uniqueId } from "../support/redis";
import { clientFor, usePrivateStack } from "./support/endpoints";
import { abortTime, pause, within } from "./support/time";
import { trackUnhandledRejections } from "./support/unhandled";

const stack = usePrivateStack();
const unhandled = trackUnhandledRejections();
const opened: IoRedis[] = [];
afterEach(async () => {
  stack().redis.thaw();
  for (const client of opened.splice(0)) client.disconnect();
  await pause(200); // the background release lands
});

/** Redis stays frozen this long at most: far past the lease, and past any bound a release may wait. */
const FROZEN_MS = 10_000;

const clients: Record<string, () => RedisClient> = {
  "@upstash/redis": () => clientFor(stack().endpoint),
  ioredis: () => {
    const client = new IoRedis(stack().redis.url);
    opened.push(client);
    return client;
  },
};

/** Whether `settling` settles while Redis is still frozen; thaws it either way. */
async function settlesWhileFrozen(settling: Promise<unknown>): Promise<boolean> {
  const settled = await Promise.race([
    settling.then(
      () => true,
      () => true,
    ),
    pause(FROZEN_MS).then(() => false),
  ]);
  stack().redis.thaw();
  await settling.catch(() => {});
  return settled;
}

describe.each(Object.entries(clients))(
  "%s, Redis frozen past the lease with a renewal in flight",
  (_kind, client) => {
    it("Lock: release() answers false while Redis is still frozen", async () => {
      const lock = new Lock({ id: uniqueId("frozen-loss"), redis: client(), lease: 1_000 });
      const lease = await lock.acquireOrThrow({ autoExtend: true });
      stack().redis.freeze();
      await within(abortTime(lease.signal), FROZEN_MS / 2, "the loss report");
      const releasing = lease.release();
      expect(await settlesWhileFrozen(releasing)).toBe(true);
      expect(await releasing).toBe(false);
      expect(unhandled()).toEqual([]);
    });

    it("Lock: runExclusive settles while Redis is still frozen", async () => {
      const lock = new Lock({ id: uniqueId("frozen-loss-run"), redis: client(), lease: 1_000 });
      const running = lock.runExclusive(
        async (signal) => {
          stack().redis.freeze();
          await abortTime(signal);
        },
        { autoExtend: true },
      );
      expect(await settlesWhileFrozen(running)).toBe(true);
    });

    it("Semaphore: `await using` disposes while Redis is still frozen", async () => {
      const semaphore = new Semaphore({
        id: uniqueId("frozen-loss-sem"),
        redis: client(),
        limit: 2,
        lease: 1_000,
      });
      const block = async () => {
        await using held = await semaphore.acquireOrThrow({ autoExtend: true });
        stack().redis.freeze();
        await abortTime(held.signal);
      };
      expect(await settlesWhileFrozen(block())).toBe(true);
    });
  },
);
