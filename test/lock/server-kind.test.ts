// On Upstash every script carries the allow-key-locking flag, so a lock operation locks only the
// lock's own keys instead of the whole database; elsewhere scripts are plain, and a server that
// refuses the flag never breaks a lock.
import { Redis } from "@upstash/redis";
import { describe, expect, it } from "vitest";
import { Debounce, Lock, Semaphore } from "../../src/index";
import { companionKey } from "../../src/keys";
import { waitUntil } from "../faults/support/time";
import { usePrivateStack } from "../stack/helpers/private-stack";
import { useRedisServer } from "../support/own-server";
import { uniqueId } from "../support/redis";
import { allScripts, sha1 } from "../support/scripts";

const scripts = Object.values(allScripts);
const { takeLock, releaseLock } = allScripts;

/**
 * Runs every script a lock sends: acquire without fencing, then with the lock's fencing, extend,
 * status, a renewal or two, and release.
 */
async function cycle(lock: Lock): Promise<void> {
  expect(await lock.acquire({ fencing: false })).toBe(true);
  expect(await lock.release()).toBe(true);
  // Renewals every 20 ms; the lease leaves a loaded machine room for them.
  expect(await lock.acquire({ fencing: true, autoExtend: { interval: 20 }, lease: 2_000 })).toBe(true);
  expect(await lock.extend(100)).toBe(true);
  expect(await lock.getStatus()).toBe("ACQUIRED");
  await new Promise((resolve) => setTimeout(resolve, 50));
  expect(lock.signal.aborted).toBe(false);
  expect(await lock.release()).toBe(true);
}

/**
 * Runs every permit script: a fair semaphore's acquire (with each kind of fencing), extend,
 * status, renewals and release, and a fair waiter that gives up its place in line.
 */
async function permitCycle(redis: Redis): Promise<void> {
  const id = uniqueId("flagged-permits");
  for (const fencing of [false, true, { clockFloor: true }]) {
    const semaphore = new Semaphore({
      id,
      redis,
      limit: 1,
      fair: true,
      fencing,
      // Renewals every 20 ms run the renewal script; the lease leaves a loaded machine room for them.
      lease: 2_000,
      autoExtend: { interval: 20 },
    });
    const lease = await semaphore.acquireOrThrow();
    expect(await lease.extend(100)).toBe(true);
    expect(await lease.getStatus()).toBe("ACQUIRED");
    if (fencing === false) {
      // Someone waits in line meanwhile, and gives up its place.
      const queue = companionKey(id, ":queue");
      const controller = new AbortController();
      const waiting = semaphore.acquire({ signal: controller.signal, timeout: 5_000, retry: { delay: 20 } });
      await waitUntil(async () => (await redis.zcard(queue)) === 1, "the waiter's place in line");
      controller.abort();
      await waiting.catch(() => {});
      await semaphore.pending;
      expect(await redis.zcard(queue)).toBe(0);
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(lease.signal.aborted).toBe(false);
    expect(await lease.release()).toBe(true);
  }
}

describe("through @upstash/redis, against the proxy's emulation of Upstash", () => {
  const stack = usePrivateStack();
  const client = (overrides: Partial<ConstructorParameters<typeof Redis>[0]> = {}) =>
    new Redis({ url: stack().url, token: stack().token, retry: false, enableTelemetry: false, ...overrides });

  it("sends every script key-locked, and each one passes the check that it touches only keys in KEYS", async () => {
    const redis = client();
    await redis.scriptFlush();
    await cycle(new Lock({ id: uniqueId("flagged"), redis }));
    await cycle(new Lock({ id: uniqueId("flagged"), redis, fencing: { clockFloor: true } }));
    await permitCycle(redis);
    const debounce = new Debounce({ id: uniqueId("flagged-debounce"), redis, wait: 10, callback: () => {} });
    expect(await debounce.call()).toBe(true);
    // Every script ran in its key-locked form, none in its plain one (the proxy answers SCRIPT
    // EXISTS by the SHA-1 the client computed, shebang included).
    expect(await redis.scriptExists(...scripts.map((script) => sha1(script.keyLocked.source)))).toEqual(
      scripts.map(() => 1),
    );
    expect(await redis.scriptExists(...scripts.map((script) => sha1(script.source)))).toEqual(
      scripts.map(() => 0),
    );
  });

  it("server: 'redis' sends plain scripts through the same client", async () => {
    const redis = client();
    await redis.scriptFlush();
    await cycle(new Lock({ id: uniqueId("plain"), redis, server: "redis" }));
    const sent = [takeLock, releaseLock];
    expect(await redis.scriptExists(...sent.map((script) => sha1(script.source)))).toEqual([1, 1]);
    expect(await redis.scriptExists(...sent.map((script) => sha1(script.keyLocked.source)))).toEqual([0, 0]);
  });

  it("the emulation would refuse a script that touched a key outside KEYS", async () => {
    const redis = client();
    const rogue = `#!lua flags=allow-key-locking\nreturn redis.call("GET", KEYS[1] .. ":other")`;
    await expect(redis.eval(rogue, [uniqueId("rogue")], [])).rejects.toThrow(/not declared in KEYS/);
  });
});

describe("through @upstash/redis, against a server that refuses the flag", () => {
  // Like serverless-redis-http in front of Redis 7: scripts reach Redis untouched, and Redis
  // answers "ERR Unexpected flag in script shebang".
  const stack = usePrivateStack({ scriptFlags: "forward" });

  it("falls back to plain scripts after one extra request, once per client, and the lock works", async () => {
    const redis = new Redis({ url: stack().url, token: stack().token, retry: false, enableTelemetry: false });
    const stats = stack().proxy.stats;
    const lock = new Lock({ id: uniqueId("refused"), redis });
    let before = stats.requests;
    expect(await lock.acquire()).toBe(true);
    expect(stats.requests - before).toBe(2);
    before = stats.requests;
    expect(await lock.getStatus()).toBe("ACQUIRED");
    expect(await lock.release()).toBe(true);
    // Each further script goes plain at once (its first use sends its text, one request each).
    expect(stats.requests - before).toBe(2);
    const other = new Lock({ id: uniqueId("refused-other"), redis });
    before = stats.requests;
    expect(await other.acquire()).toBe(true);
    expect(await other.release()).toBe(true);
    expect(stats.requests - before).toBe(2);
  });
});

describe("through ioredis", () => {
  const { connect } = useRedisServer();

  it("on plain Redis sends plain scripts by default", async () => {
    const redis = connect();
    await cycle(new Lock({ id: uniqueId("io-plain"), redis }));
    const [plain, keyLocked] = (await redis.script(
      "EXISTS",
      sha1(takeLock.source),
      sha1(takeLock.keyLocked.source),
    )) as number[];
    expect([plain, keyLocked]).toEqual([1, 0]);
  });

  it("told the server is Upstash while it is plain Redis: Redis refuses the flag once, and the lock works", async () => {
    const redis = connect();
    const errors: unknown[] = [];
    redis.on("error", (error) => errors.push(error));
    const lock = new Lock({ id: uniqueId("io-upstash"), redis, server: "upstash" });
    await cycle(lock);
    await cycle(lock);
    expect(errors).toEqual([]);
    const info = (await redis.info("commandstats")) as string;
    const errorsOfEval = /cmdstat_eval:.*failed_calls=(\d+)/.exec(info)?.[1];
    expect(Number(errorsOfEval)).toBe(1);
  });
});
