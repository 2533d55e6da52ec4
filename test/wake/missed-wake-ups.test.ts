// Wake-ups that used to be missed (review of 2026-12-01), each then waited for its next safety poll
// (4 s away here): a semaphore waiter whose wake an acquisition cancelled while another freed permit
// stayed free, and a fair waiter that ignored an unfair release because the waiters it knew to be ahead
// had left the line, which announces nothing. Each must be woken by the release instead. And (review of
// 2026-12-03) a fair waiter behind one that left while the lock was free, and waiters that heard a holder
// merely confirm its own hold, which cancelled their wake-up as a new hold would.
// Each waiter is covered before the releases (its client's subscription active, and a try of its own sent
// after it): a waiter that never subscribed fails there, and a covered one polls only as a safety net, about
// 10 s away (retry.maxDelay 20 s, capped near half its 20 s schedule), so only a wake-up hands over within
// WOKEN_WITHIN_MS (review helper-181: with maxDelay 4 s, a missed wake-up still passed about half the time).
import type { Redis as IoRedis } from "ioredis";
import { beforeAll, describe, expect, it } from "vitest";
import { enableWakeUps, FairLock, type Lease, Lock, Semaphore } from "../../src/index";
import { companionKey, eventChannel } from "../../src/keys";
import { feedFor } from "../../src/wake/feeds";
import { waitUntil, within } from "../faults/support/time";
import { useRedisServer } from "../support/own-server";
import { uniqueId } from "../support/redis";

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const LONG_WAIT = { retry: { attempts: 200, delay: 100, maxDelay: 20_000 } } as const;
/** Far below the safety poll (about 10 s away), and far above a wake-up's few ms on a loaded machine. */
const WOKEN_WITHIN_MS = 2_000;
/** A missed wake-up fails within this, before the test's own timeout (its safety poll is about 10 s away). */
const GIVE_UP_MS = 8_000;

const own = useRedisServer();
let redis: IoRedis;
let waiterRedis: IoRedis;
beforeAll(() => {
  redis = own.connect();
  waiterRedis = own.connect();
  enableWakeUps(waiterRedis);
});

/**
 * Scripts Redis has run so far (EVAL and EVALSHA: one per try), read on `client`'s own connection, so that
 * every command it sent before the read is counted.
 */
async function scriptCalls(client: IoRedis): Promise<number> {
  const stats = await client.info("commandstats");
  return [...stats.matchAll(/^cmdstat_(?:eval|evalsha):calls=(\d+)/gm)].reduce(
    (total, [, calls]) => total + Number(calls),
    0,
  );
}

/** How long the waiters' script calls must stand still to show every waiter covered: 5 of their 100 ms polls. */
const QUIET_MS = 500;

/**
 * Waits until the waits of lock `id` on `waiterRedis` are covered (waited for, not assumed after a fixed
 * pause): the client's subscription to the lock's channel is active, then their tries stop. An uncovered
 * waiter polls every 100 ms (`LONG_WAIT.retry.delay`); a covered one, having sent a try after the
 * subscription was active, next polls seconds later. Not a count of tries after a read: a try sent between
 * the subscription's start and that read would never be counted (4 busy loops beside the suite showed it).
 * A waiter whose poll a loaded machine held up past `QUIET_MS` may be taken as covered when it is not; its
 * next poll then finds the release, so that makes the test prove less, never fail.
 */
async function covered(id: string): Promise<void> {
  const channel = (await eventChannel(id)) as string;
  await waitUntil(() => feedFor(waiterRedis)?.active(channel) === true, "the waiters' subscription active");
  let calls = await scriptCalls(waiterRedis);
  let changedAt = performance.now();
  await waitUntil(
    async () => {
      const now = await scriptCalls(waiterRedis);
      if (now !== calls) [calls, changedAt] = [now, performance.now()];
      return performance.now() - changedAt >= QUIET_MS;
    },
    "the waiters' tries to stop, each covered",
    { timeoutMs: 10_000 },
  );
}

describe("a semaphore waiter with wake-ups", () => {
  it("two releases then one acquisition: it takes the permit still free", async () => {
    const id = uniqueId("missed-semaphore");
    const holders = new Semaphore({ id, redis, limit: 2, lease: 20_000, retry: { attempts: 1 } });
    const waiter = new Semaphore({ id, redis: waiterRedis, limit: 2, lease: 20_000, ...LONG_WAIT });
    const first = await holders.acquire();
    const second = await holders.acquire();
    const waiting = waiter.acquire();
    await covered(id);
    // It hears the lock change hands once: a release, taken straight back.
    const released = first?.release();
    const retaken = await holders.acquire();
    await released;
    await pause(600);
    // Two releases, then one acquisition by someone else: one permit stays free.
    await Promise.all([second?.release(), retaken?.release()]);
    const releasedAt = performance.now();
    const other = await holders.acquire();
    expect(other).toBeDefined();
    const lease = await within(waiting, GIVE_UP_MS, "the waiter, woken by the releases");
    expect(lease).toBeDefined();
    expect(performance.now() - releasedAt).toBeLessThan(WOKEN_WITHIN_MS);
    await Promise.all([lease?.release(), other?.release()]);
  }, 20_000);

  // Review of 2026-12-05 (helper-116, 15/18): permits freed unannounced (their holders' leases ran out) are
  // taken by callers who never waited; an acquisition of one cancelled the wake-up of a release of another.
  it("a release, then an acquisition of a permit freed unannounced: it takes the released permit", async () => {
    const id = uniqueId("missed-unannounced");
    const limit = 3;
    const permit = (n: number) => companionKey(id, `:permit:${n}`);
    const holders = new Semaphore({ id, redis, limit, lease: 20_000, retry: { attempts: 1 } });
    const waiter = new Semaphore({ id, redis: waiterRedis, limit, lease: 20_000, ...LONG_WAIT });
    const held = await Promise.all([holders.acquire(), holders.acquire(), holders.acquire()]);
    expect(held.every(Boolean)).toBe(true);
    const waiting = waiter.acquire();
    await covered(id);
    // Permit 1's lease runs out (unannounced), and someone takes it: the waiter heard the lock change hands.
    await redis.del(permit(1));
    const taken = await holders.acquire();
    expect(taken).toBeDefined();
    await pause(300);
    // Permit 1 runs out again; permit 3's holder releases, and a newcomer takes the lowest free one: permit 1.
    await redis.del(permit(1));
    const releasedAt = performance.now();
    const [, newcomer] = await Promise.all([held[2]?.release(), holders.acquire()]);
    expect(newcomer).toBeDefined();
    const lease = await within(waiting, GIVE_UP_MS, "the waiter, woken by the release");
    expect(lease).toBeDefined();
    expect(performance.now() - releasedAt).toBeLessThan(WOKEN_WITHIN_MS);
    await Promise.all([lease?.release(), taken?.release(), newcomer?.release(), held[1]?.release()]);
  }, 20_000);
});

describe("a fair waiter behind one that left the line", () => {
  it("is woken by a plain Lock holder's release", async () => {
    const id = uniqueId("missed-fair");
    const holder = new Lock({ id, redis, lease: 20_000 });
    expect(await holder.acquire()).toBe(true);
    const inLine = (count: number, what: string) =>
      waitUntil(async () => (await redis.zcard(companionKey(id, ":queue"))) === count, what);
    const leaving = new AbortController();
    const ahead = new FairLock({ id, redis: waiterRedis, lease: 20_000, ...LONG_WAIT })
      .acquire({ signal: leaving.signal })
      .catch(() => false);
    await inLine(1, "ahead in line");
    const behind = new FairLock({ id, redis: waiterRedis, lease: 20_000, ...LONG_WAIT });
    const waiting = behind.acquire();
    await inLine(2, "behind in line");
    await covered(id); // both subscribed, and covered by the subscription
    leaving.abort();
    expect(await ahead).toBe(false);
    await inLine(1, "ahead left the line"); // its leave landed (announcing nothing)
    const releasedAt = performance.now();
    expect(await holder.release()).toBe(true);
    expect(await within(waiting, GIVE_UP_MS, "behind, woken by the release")).toBe(true);
    expect(performance.now() - releasedAt).toBeLessThan(WOKEN_WITHIN_MS);
    expect(await behind.release()).toBe(true);
  }, 20_000);
});

describe("a fair waiter behind one that leaves while the lock is free", () => {
  it("is woken by the leave", async () => {
    const id = uniqueId("leave-free");
    const holder = new FairLock({ id, redis, lease: 20_000 });
    expect(await holder.acquire()).toBe(true);
    const inLine = (count: number) =>
      waitUntil(async () => (await redis.zcard(`{${id}}:queue`)) >= count, `${count} in line`);
    const leaving = new AbortController();
    const ahead = new FairLock({ id, redis: waiterRedis, lease: 20_000, ...LONG_WAIT })
      .acquire({ signal: leaving.signal })
      .catch(() => false);
    await inLine(1);
    const behind = new FairLock({ id, redis: waiterRedis, lease: 20_000, ...LONG_WAIT });
    const waiting = behind.acquire();
    await inLine(2);
    await covered(id);
    // The holder's lease ran out (no release announced it); the first in line gives up before its next try.
    await redis.del(id);
    const leftAt = performance.now();
    leaving.abort();
    expect(await ahead).toBe(false);
    expect(await within(waiting, GIVE_UP_MS, "behind, woken by the leave")).toBe(true);
    expect(performance.now() - leftAt).toBeLessThan(WOKEN_WITHIN_MS);
    expect(await behind.release()).toBe(true);
  }, 20_000);
});

describe("a take that confirms a hold of its token", () => {
  it.each([
    ["Lock", (id: string) => new Lock({ id, redis, lease: 20_000 }), "acquired"],
    ["FairLock", (id: string) => new FairLock({ id, redis, lease: 20_000 }), "acquired"],
    // Its new hold left one permit free, which the announcement says.
    ["Semaphore", (id: string) => new Semaphore({ id, redis, limit: 2, lease: 20_000 }), "acquired:1"],
  ])("%s: announces nothing (only a new hold cancels a waiter's wake-up)", async (_name, make, taken) => {
    const id = uniqueId("confirm-quiet");
    const heard: string[] = [];
    const listener = own.connect();
    listener.on("message", (_channel: string, message: string) => heard.push(message));
    await listener.subscribe((await eventChannel(id)) as string);
    const uuid = crypto.randomUUID();
    const first = make(id);
    expect(await first.acquire({ uuid })).toBeTruthy();
    expect(await make(id).acquire({ uuid })).toBeTruthy(); // the same job elsewhere: a confirm
    await redis.publish((await eventChannel(id)) as string, "end-of-test");
    await waitUntil(() => heard.includes("end-of-test"), "the last announcement");
    expect(heard).toEqual([taken, "end-of-test"]);
  });
});

// Review helper-79 (2026-12-05): with k permits free, a fair release handed its permit to the k-th in line
// and told only it, counting on the first k - 1 to take the others by themselves. A permit freed silently
// before (a dead waiter's grant that ran out) left them untold: the first in line slept to its safety poll
// while the second was served (4/4).
describe("a fair semaphore's release while another permit is free", () => {
  it("hands its permit to the first in line and wakes the next for the other", async () => {
    const id = uniqueId("missed-fair-first");
    const options = { id, limit: 2, fair: true, lease: 20_000 } as const;
    const holders = new Semaphore({ ...options, redis, retry: { attempts: 1 } });
    const [a, b] = [await holders.acquire(), await holders.acquire()];
    // A waiter that died first in line (its process killed), whose grant is 300 ms.
    const dead = "dead-waiter:300:dead-token";
    await redis.zadd(companionKey(id, ":queue"), await redis.incr(companionKey(id, ":queue-places")), dead);
    await redis.zadd(companionKey(id, ":queue-deadlines"), Date.now() + 5_000, dead);
    const wait = () => new Semaphore({ ...options, redis: waiterRedis, ...LONG_WAIT }).acquire();
    const first = wait();
    await waitUntil(async () => (await redis.zcard(companionKey(id, ":queue"))) === 2, "first queued");
    const second = wait();
    await waitUntil(async () => (await redis.zcard(companionKey(id, ":queue"))) === 3, "second queued");
    await covered(id);
    await b?.release(); // handed to the dead waiter, whose grant runs out unannounced
    await pause(500);
    const order: string[] = [];
    const served = (name: string) => (lease: Lease | undefined) => {
      order.push(name);
      return lease;
    };
    const releasedAt = performance.now();
    await a?.release();
    const leases = await within(
      Promise.all([first.then(served("first")), second.then(served("second"))]),
      GIVE_UP_MS,
      "both waiters, woken by the release",
    );
    expect(performance.now() - releasedAt).toBeLessThan(WOKEN_WITHIN_MS);
    expect(order).toEqual(["first", "second"]);
    await Promise.all(leases.map((lease) => lease?.release()));
  }, 20_000);
});
