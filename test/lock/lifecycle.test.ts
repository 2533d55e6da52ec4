// The edges of a lock's life (issue 15, items 6 to 11): keys that expire by themselves, pending work,
// distinct keys for distinct ids, leases longer than a timer, bounded final requests, a signal that agrees.
import { describe, expect, it } from "vitest";
import { FairLock, Lock, Semaphore } from "../../src/index";
import { companionKey } from "../../src/keys";
import { clientFor, usePrivateStack } from "../faults/support/endpoints";
import { pause, waitUntil, within } from "../faults/support/time";
import { startPassThrough } from "../support/pass-through";
import { uniqueId } from "../support/redis";

const stack = usePrivateStack();

describe("item 6: fair queue keys expire by themselves", () => {
  it("a waiter that dies in line leaves queue keys that carry a TTL", async () => {
    const { endpoint } = stack();
    const client = clientFor(endpoint);
    const wire = await startPassThrough({ target: endpoint.url });
    try {
      const id = uniqueId("queue-ttl");
      const holder = new FairLock({ id, redis: client });
      expect(await holder.acquire()).toBe(true);
      const dying = () =>
        new FairLock({
          id,
          redis: clientFor({ url: wire.url, token: endpoint.token }),
          retry: { delay: 50, maxDelay: 100 },
        });
      const waiting = [dying(), dying()].map((lock) => lock.acquire({ timeout: 5_000 }).catch(() => false));
      // Both in line before they die (without them, no queue key exists, and a missing key has no TTL of -1).
      await waitUntil(
        async () => (await client.zcard(companionKey(id, ":queue"))) === 2,
        "both waiters in line",
      );
      wire.faults.refuse();
      await holder.release();
      await Promise.all(waiting);
      for (const suffix of [":queue", ":queue-deadlines"]) {
        const ttl = await client.pttl(companionKey(id, suffix));
        // There, with a lifetime: not -1 (no TTL), nor -2 (no key: the check would be empty).
        expect(ttl, suffix).toBeGreaterThan(0);
      }
    } finally {
      await wire.close();
    }
  }, 20_000);
});

describe("item 6: after every kind of death, only keys with a lifetime stay", () => {
  it("holders and waiters of locks, fair locks and semaphores die; every key left expires by itself", async () => {
    const { endpoint } = stack();
    const client = clientFor(endpoint);
    const wire = await startPassThrough({ target: endpoint.url });
    const dead = clientFor({ url: wire.url, token: endpoint.token });
    const id = uniqueId("deaths");
    const options = { lease: 2_000, retry: { delay: 50, maxDelay: 100 }, fencing: true } as const;
    try {
      // Holders that will die holding: a lock, a fair lock, one permit of a fair semaphore.
      await new Lock({ id: `${id}:lock`, redis: dead, ...options }).acquireOrThrow();
      await new FairLock({ id: `${id}:fair`, redis: dead, ...options }).acquireOrThrow();
      await new Semaphore({
        id: `${id}:sem`,
        redis: dead,
        limit: 1,
        fair: true,
        ...options,
      }).acquireOrThrow();
      // Waiters that die in line, and a holder that releases after they died.
      const holder = await new FairLock({ id: `${id}:line`, redis: client, ...options }).acquireOrThrow();
      const waiters = [0, 1].map(() =>
        new FairLock({ id: `${id}:line`, redis: dead, ...options })
          .acquire({ timeout: 5_000 })
          .catch(() => false),
      );
      // Both in line before they die.
      await waitUntil(
        async () => (await client.zcard(companionKey(`${id}:line`, ":queue"))) === 2,
        "both waiters in line",
      );
      wire.faults.refuse();
      await holder.release();
      await Promise.all(waiters);
      const keys: string[] = [];
      let cursor = "0";
      do {
        const [next, found] = await client.scan(cursor, { match: `*${id}*`, count: 1_000 });
        cursor = String(next);
        keys.push(...found);
      } while (cursor !== "0");
      expect(keys.length).toBeGreaterThan(5);
      for (const key of keys) {
        const ttl = await client.pttl(key);
        // On Upstash (this client's server kind) fencing counters never expire, as the key table says.
        if (key.endsWith(":fence")) expect(ttl, key).toBe(-1);
        // -2: gone since the scan, which is what a lifetime is for; 0: expiring within the millisecond.
        else expect(ttl === -2 || ttl >= 0, `${key}: ${ttl}`).toBe(true);
      }
    } finally {
      await wire.close();
    }
  }, 20_000);
});

describe("item 7: pending covers the clean-up of an aborted acquire", () => {
  it("does not settle while the abandoned request can still take the lock", async () => {
    const { endpoint, redis } = stack();
    const client = clientFor(endpoint);
    const id = uniqueId("pending");
    const lock = new Lock({ id, redis: client });
    expect(await lock.acquire()).toBe(true);
    expect(await lock.release()).toBe(true);
    redis.freeze();
    let settled = false;
    try {
      const abort = new AbortController();
      setTimeout(() => abort.abort(), 100);
      await expect(lock.acquire({ timeout: 300, signal: abort.signal })).rejects.toBeDefined();
      void lock.pending.then(() => {
        settled = true;
      });
      await pause(600); // a window in which pending must not settle: Redis stays frozen through it
      expect(settled).toBe(false);
    } finally {
      redis.thaw();
    }
    await lock.pending;
    expect(await client.get(id)).toBeNull();
  }, 20_000);
});

describe("item 8: distinct ids, distinct keys", () => {
  it('semaphores "jobs" and "{jobs}" do not share permits', async () => {
    const { endpoint } = stack();
    const client = clientFor(endpoint);
    const base = uniqueId("jobs").replace(/[{}]/g, "");
    const plain = new Semaphore({ id: base, redis: client, limit: 1 });
    const tagged = new Semaphore({ id: `{${base}}`, redis: client, limit: 1, retry: { attempts: 1 } });
    const a = await plain.acquire();
    const b = await tagged.acquire();
    expect(a).toBeDefined();
    expect(b).toBeDefined();
    await a?.release();
    await b?.release();
  });
});

describe("item 9: a lease above 2^31 - 1 ms", () => {
  it("is not reported lost right after the acquire", async () => {
    const { endpoint } = stack();
    const lock = new Lock({ id: uniqueId("huge-lease"), redis: clientFor(endpoint), lease: 2 ** 33 });
    expect(await lock.acquire()).toBe(true);
    const signal = lock.signal;
    await pause(50); // a window in which a timer overflowing to 1 ms would abort it: it must not
    expect(signal.aborted).toBe(false);
    await lock.release();
  });
});

describe("item 10: runExclusive on a frozen Redis", () => {
  it("settles soon after the lease ran out, not never", async () => {
    const { endpoint, redis } = stack();
    const lock = new Lock({ id: uniqueId("frozen-run"), redis: clientFor(endpoint), lease: 1_000 });
    expect(await lock.acquire()).toBe(true);
    expect(await lock.release()).toBe(true);
    const run = lock.runExclusive(
      async () => {
        redis.freeze();
        await pause(100);
        return "done";
      },
      { timeout: 500 },
    );
    try {
      // Settles while Redis is still frozen: `within` fails the test if it has not, 8 s after the 1 s lease.
      await within(
        run.catch(() => undefined),
        9_000,
        "runExclusive on a frozen Redis",
      );
    } finally {
      redis.thaw();
    }
    await run;
  }, 20_000);
});

describe("item 11: the signal agrees with remainingMs", () => {
  it("after a synchronous stall past the deadline, the signal reads aborted at once", async () => {
    const { endpoint } = stack();
    const lock = new Lock({ id: uniqueId("stall"), redis: clientFor(endpoint), lease: 600 });
    expect(await lock.acquire()).toBe(true);
    const signal = lock.signal;
    const until = performance.now() + 650;
    while (performance.now() < until) {
      // a synchronous stall: no timer can run
    }
    expect(lock.remainingMs).toBe(0);
    expect(signal.aborted).toBe(true);
    expect(() => signal.throwIfAborted()).toThrow();
  });
});
