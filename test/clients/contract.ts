import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import { scriptRunnerFor } from "../../src/client/script-runner";
import { guessServerKind } from "../../src/client/server";
import type { RedisClient, ScriptArgument, ScriptReply } from "../../src/client/types";
import { sameSlotKey } from "../../src/hash-slot";
import { Debounce, Lock, Semaphore } from "../../src/index";
import { fenceKey, receiptKey } from "../../src/keys";
import { takeIfFreeOrOwned, takeWithClockFence, takeWithCountedFence } from "../../src/scripts/acquire";
import { allScripts } from "../../src/scripts/all";
import { countCall, isLatestCall } from "../../src/scripts/debounce";
import { addLeaseIfOwned } from "../../src/scripts/extend";
import {
  addLeaseToPermit,
  checkPermit,
  leaveQueue,
  releasePermit,
  renewPermit,
  takePermit,
  takePermitWithClockFence,
  takePermitWithCountedFence,
} from "../../src/scripts/permits";
import { deleteIfOwned } from "../../src/scripts/release";
import { renewIfOwned } from "../../src/scripts/renew";
import { defineScript, KEY_LOCKING_SHEBANG, type LuaScript } from "../../src/scripts/script";
import { checkOwner } from "../../src/scripts/status";
import { permitKeys } from "../../src/store/permit-store";
import { uniqueId } from "../support/redis";

/** Counts the waiters in a fair queue (a test's own script, sent like the library's). */
const COUNT_QUEUE = defineScript({
  name: "count queue",
  source: `return redis.call("ZCARD", KEYS[1])`,
  sha1: createHash("sha1").update(`return redis.call("ZCARD", KEYS[1])`).digest("hex"),
  keyLockedSha1: createHash("sha1")
    .update(`${KEY_LOCKING_SHEBANG}return redis.call("ZCARD", KEYS[1])`)
    .digest("hex"),
});

/** What the server behind a client lets a test do besides sending scripts. */
export interface ServerControls {
  /** Empties the script cache of every node (SCRIPT FLUSH); only on servers the test started. */
  flushScripts(): Promise<void>;
  /** Whether the server (on a cluster, any node) has `sha1` in its script cache (SCRIPT EXISTS). */
  scriptCached(sha1: string): Promise<boolean>;
}

type Run = (script: LuaScript, keys: string[], args: ScriptArgument[]) => Promise<ScriptReply>;

const LEASE_MS = 10_000;

/** Sends every script of the library with the arguments the library sends, and checks each reply. */
async function exerciseEveryScript(run: Run): Promise<void> {
  const id = uniqueId("scripts");
  const receipt = receiptKey(id);
  expect(await run(takeIfFreeOrOwned, [id], ["owner", LEASE_MS])).toEqual([1]);
  const [taken, pttl] = (await run(takeIfFreeOrOwned, [id], ["other", LEASE_MS])) as number[];
  expect(taken).toBe(0);
  expect(pttl).toBeGreaterThan(0);

  const [renewed, renewedPttl] = (await run(renewIfOwned, [id], ["owner", LEASE_MS])) as number[];
  expect(renewed).toBe(1);
  expect(renewedPttl).toBeGreaterThan(LEASE_MS - 1_000);
  expect(await run(renewIfOwned, [id], ["other", LEASE_MS])).toEqual([0, -2]);

  const [held, left] = (await run(checkOwner, [id], ["owner"])) as number[];
  expect(held).toBe(1);
  expect(left).toBeGreaterThan(0);
  expect(await run(checkOwner, [id], ["other"])).toEqual([0, -2]);

  const [extended, target] = (await run(addLeaseIfOwned, [id, receipt], ["owner", "x1", 5000])) as number[];
  expect(extended).toBe(1);
  expect(target).toBeGreaterThan(5000);
  expect(await run(addLeaseIfOwned, [id, receipt], ["other", "x2", 5000])).toEqual([0, -2]);

  expect(await run(deleteIfOwned, [id, receipt], ["other", "r1"])).toBe(0);
  expect(await run(deleteIfOwned, [id, receipt], ["owner", "r2"])).toBe(1);
  // A re-run of the same release (a retried request) answers the same from its receipt.
  expect(await run(deleteIfOwned, [id, receipt], ["owner", "r2"])).toBe(1);
  expect(await run(checkOwner, [id], ["owner"])).toEqual([0, -2]);

  // With a fencing counter, a second key in the same slot; tokens increase with each acquisition,
  // from the counter alone or with the clock floor.
  for (const [script, args] of [
    [takeWithCountedFence, ["owner", LEASE_MS]],
    [takeWithClockFence, ["owner", LEASE_MS, LEASE_MS + 60_000]],
  ] as const) {
    const fenced = uniqueId("scripts-fenced");
    const [first, firstToken] = (await run(script, [fenced, fenceKey(fenced)], [...args])) as number[];
    const [again, nextToken] = (await run(script, [fenced, fenceKey(fenced)], [...args])) as number[];
    expect([first, again]).toEqual([1, 1]);
    expect(Number.isSafeInteger(firstToken)).toBe(true);
    expect(nextToken).toBeGreaterThan(firstToken as number);
  }

  await exercisePermitScripts(run);

  const counter = uniqueId("scripts-counter");
  expect(await run(countCall, [counter], [60_000])).toBe(1);
  expect(await run(countCall, [counter], [60_000])).toBe(2);
  expect(await run(isLatestCall, [counter], [1])).toBe(0);
  expect(await run(isLatestCall, [counter], [2])).toBe(1);
}

/** The permit scripts (semaphores, fair locks), with the arguments the library sends. */
async function exercisePermitScripts(run: Run): Promise<void> {
  const base = uniqueId("scripts-permits");
  const [queue, deadlines, receipt, fence, places] = [
    ":queue",
    ":queue-deadlines",
    ":receipt",
    ":fence",
    ":queue-places",
  ].map((suffix) => sameSlotKey(base, suffix)) as [string, string, string, string, string];
  const permits = permitKeys(base, 2);
  const take = (token: string, fair: boolean, lastTry = false) =>
    [token, LEASE_MS, base, fair ? "1" : "0", Date.now(), 5_000, lastTry ? "1" : "0", 0] as ScriptArgument[];
  const takeKeys = [queue, deadlines, fence, places, ...permits];
  expect(await run(takePermit, takeKeys, take("a", true))).toEqual([1, 1]);
  const [, second, fenceToken] = (await run(
    takePermitWithCountedFence,
    takeKeys,
    take("b", true),
  )) as number[];
  expect(second).toBe(2);
  expect(fenceToken).toBe(1);
  // Both permits taken: a fair caller queues (first in line, place 1); a last try leaves the line.
  const [taken, pttl, holder, ahead, seq] = (await run(takePermit, takeKeys, take("c", true))) as number[];
  expect([taken, ahead, seq]).toEqual([0, 0, 1]);
  expect(pttl).toBeGreaterThan(0);
  expect(holder).toBeGreaterThan(0);
  const lastTry = (await run(takePermit, takeKeys, take("d", true, true))) as number[];
  expect([lastTry[0], lastTry[3], lastTry[4]]).toEqual([0, 0, 0]);
  expect(await run(checkPermit, permits, ["a"])).toEqual([1, expect.any(Number)]);
  expect(await run(checkPermit, permits, ["z"])).toEqual([0, -2]);
  const [renewed] = (await run(renewPermit, permits, ["a", LEASE_MS])) as number[];
  expect(renewed).toBe(1);
  const [extended, target] = (await run(
    addLeaseToPermit,
    [receipt, ...permits],
    ["a", "e1", 5_000],
  )) as number[];
  expect(extended).toBe(1);
  expect(target).toBeGreaterThan(5_000);
  // Releasing "a" frees a permit and hands it to the first in line, "c", for a 3 s grant.
  const releaseKeys = [queue, deadlines, receipt, ...permits];
  expect(await run(releasePermit, releaseKeys, ["a", "r1", base, "1", Date.now(), 3_000])).toBe(1);
  expect(await run(releasePermit, releaseKeys, ["a", "r1", base, "1", Date.now(), 3_000])).toBe(1);
  const [granted, grantPttl] = (await run(checkPermit, permits, ["c"])) as number[];
  expect(granted).toBe(1);
  expect(grantPttl).toBeLessThanOrEqual(3_000);
  // "c" confirms with a try of its own (fencing needs one): the permit is its, the lease restarts.
  expect(await run(takePermitWithClockFence, takeKeys, [...take("c", true), LEASE_MS + 60_000])).toEqual([
    1,
    1,
    expect.any(Number),
  ]);
  // A waiter that gives up while a permit was handed to it hands it on. The line emptied, yet "e"
  // gets a place no earlier stay had: a grant names the stay it is for.
  expect(await run(takePermit, takeKeys, take("e", true))).toEqual([
    0,
    expect.any(Number),
    expect.any(Number),
    0,
    2,
  ]);
  expect(await run(releasePermit, releaseKeys, ["c", "r2", base, "1", Date.now(), 3_000])).toBe(1);
  expect(await run(checkPermit, permits, ["e"])).toEqual([1, expect.any(Number)]);
  expect(await run(leaveQueue, [queue, deadlines, ...permits], ["e", base, Date.now(), 3_000])).toBe(1);
  expect(await run(checkPermit, permits, ["e"])).toEqual([0, -2]);
}

/** The runner a Lock on `client` would use: key-locked scripts where the client looks like Upstash. */
function runnerLikeLock(client: RedisClient) {
  const keyLocking = guessServerKind(client) === "upstash";
  return { runner: scriptRunnerFor(client, keyLocking), keyLocking };
}

/**
 * The client contract: every script through `scriptRunnerFor`, then the real `Lock` and
 * `Debounce` given the raw client. Run once per client and topology.
 */
export function describeClientContract(
  client: () => RedisClient,
  server: ServerControls,
  extraIds: readonly string[] = [],
): void {
  describe("scripts through scriptRunnerFor", () => {
    it("runs every script of the library and reads each reply as numbers", async () => {
      const { runner } = runnerLikeLock(client());
      const sent = new Set<LuaScript>();
      await exerciseEveryScript((script, keys, args) => {
        sent.add(script);
        return runner.run(script, keys, args);
      });
      expect(sent).toEqual(new Set(allScripts));
    });

    it("falls back to the full script after SCRIPT FLUSH, which caches it again", async () => {
      const { runner, keyLocking } = runnerLikeLock(client());
      const sent = (script: LuaScript) => (keyLocking ? script.keyLocked.sha1 : script.sha1);
      const id = uniqueId("noscript");
      expect(await runner.run(checkOwner, [id], ["t"])).toEqual([0, -2]);
      expect(await runner.run(checkOwner, [id], ["t"])).toEqual([0, -2]);
      await server.flushScripts();
      expect(await server.scriptCached(sent(checkOwner))).toBe(false);
      expect(await runner.run(checkOwner, [id], ["t"])).toEqual([0, -2]);
      expect(await server.scriptCached(sent(checkOwner))).toBe(true);

      await server.flushScripts();
      await exerciseEveryScript((script, keys, args) => runner.run(script, keys, args));
      await exerciseEveryScript((script, keys, args) => runner.run(script, keys, args));
      for (const script of allScripts) expect(await server.scriptCached(sent(script))).toBe(true);
    });
  });

  describeLockContract(client, { fencing: true, extraIds });
  describeSemaphoreContract(client, { fencing: true, fair: true, extraIds });

  describe("Debounce with the raw client", () => {
    it("runs the callback once per burst, with the winning call's argument", async () => {
      const id = uniqueId("debounce");
      const runs: number[] = [];
      const make = () =>
        new Debounce({ id, redis: client(), wait: 500, callback: (n: number) => runs.push(n) });
      const [a, b] = [make(), make()];
      const outcomes = await Promise.all([a.call(1), b.call(2), a.call(3), b.call(4)]);
      expect(outcomes.filter(Boolean)).toHaveLength(1);
      expect(runs).toEqual([[1, 2, 3, 4][outcomes.indexOf(true)]]);
      // A call after the burst is a burst of its own.
      expect(await a.call(5)).toBe(true);
      expect(runs).toHaveLength(2);
    });
  });
}

/** What a topology supports, for {@link describeLockContract}. */
export interface LockContractOptions {
  /** Whether fencing tokens are available (not on a quorum). */
  readonly fencing: boolean;
  /** Ids to try besides a plain one, e.g. with braces on a cluster. */
  readonly extraIds?: readonly string[];
}

/**
 * The lock contract, given the `redis` option as users pass it: one client of any kind, a
 * cluster client, or a quorum of independent clients. Run once per client and topology.
 */
export function describeLockContract(
  redis: () => RedisClient | readonly RedisClient[],
  { fencing, extraIds = [] }: LockContractOptions,
): void {
  describe("Lock with the raw client", () => {
    const ids: [string, () => string][] = [
      ["a plain id", () => uniqueId("lock")],
      ...extraIds.map((id): [string, () => string] => [JSON.stringify(id), () => id]),
    ];
    it.each(ids)("acquires, reports, extends and releases %s", async (_name, makeId) => {
      const lock = new Lock({ id: makeId(), redis: redis(), lease: LEASE_MS, fencing });
      expect(await lock.getStatus()).toBe("FREE");
      expect(await lock.acquire()).toBe(true);
      const firstToken = lock.fencingToken;
      try {
        expect(await lock.getStatus()).toBe("ACQUIRED");
        expect(await lock.extend(5000)).toBe(true);
        expect(lock.remainingMs).toBeGreaterThan(LEASE_MS);
      } finally {
        expect(await lock.release()).toBe(true);
      }
      expect(await lock.getStatus()).toBe("FREE");
      expect(await lock.release()).toBe(false);
      expect(await lock.extend(5000)).toBe(false);

      expect(await lock.acquire()).toBe(true);
      if (fencing) expect(lock.fencingToken).toBeGreaterThan(firstToken as number);
      else expect(lock.fencingToken).toBeUndefined();
      expect(await lock.release()).toBe(true);
    });

    it('holds with a seeded uuid "123" that another instance can check, extend and release', async () => {
      const id = uniqueId("seeded");
      const holder = new Lock({ id, redis: redis() });
      expect(await holder.acquire({ uuid: "123" })).toBe(true);
      const other = new Lock({ id, redis: redis(), uuid: "123" });
      expect(await other.getStatus()).toBe("ACQUIRED");
      expect(await other.extend(1000)).toBe(true);
      expect(await other.release()).toBe(true);
      expect(await holder.getStatus()).toBe("FREE");
    });

    it("lets one of two contending locks win until it releases", async () => {
      const id = uniqueId("contention");
      const winner = new Lock({ id, redis: redis(), retry: { attempts: 1 } });
      const loser = new Lock({ id, redis: redis(), retry: { attempts: 1 } });
      expect(await winner.acquire()).toBe(true);
      expect(await loser.acquire()).toBe(false);
      expect(await loser.getStatus()).toBe("FREE");
      expect(await loser.release()).toBe(false);
      expect(await winner.getStatus()).toBe("ACQUIRED");
      expect(await winner.release()).toBe(true);
      expect(await loser.acquire()).toBe(true);
      expect(await loser.release()).toBe(true);
    });

    it("never lets two of many concurrent acquirers hold at once", async () => {
      const id = uniqueId("many");
      const locks = Array.from({ length: 8 }, () => new Lock({ id, redis: redis(), retry: { attempts: 1 } }));
      const won = await Promise.all(locks.map((lock) => lock.acquire()));
      expect(won.filter(Boolean).length).toBeLessThanOrEqual(1);
      const statuses = await Promise.all(locks.map((lock) => lock.getStatus()));
      expect(statuses.filter((status) => status === "ACQUIRED")).toHaveLength(won.filter(Boolean).length);
      await Promise.all(locks.map((lock) => lock.release()));
    });

    it("waits for a release within a timeout", async () => {
      const id = uniqueId("timeout");
      const holder = new Lock({ id, redis: redis() });
      await holder.acquireOrThrow();
      const waiting = new Lock({ id, redis: redis(), retry: { delay: 20 } }).acquire({ timeout: 5_000 });
      setTimeout(() => void holder.release(), 100);
      expect(await waiting).toBe(true);
    });

    it("wakes a waiter as soon as the holder releases, long before its next poll", async () => {
      const id = uniqueId("wake");
      const holder = new Lock({ id, redis: redis(), lease: 60_000 });
      await holder.acquireOrThrow();
      // Three polls 100 ms apart find the same holder, so the waiter subscribes; from then on it polls
      // only every 20 s: only the release announcement can end the wait early.
      const waiter = new Lock({
        id,
        redis: redis(),
        retry: { attempts: 1_000, delay: 100, maxDelay: 20_000 },
      });
      const started = performance.now();
      const waiting = waiter.acquire();
      setTimeout(() => void holder.release(), 1_000);
      expect(await waiting).toBe(true);
      expect(performance.now() - started).toBeLessThan(10_000);
      await waiter.release();
    });

    it("auto-extends a short lease through longer work, and await using releases", async () => {
      const id = uniqueId("auto-extend");
      {
        await using lock = await new Lock({
          id,
          redis: redis(),
          lease: 300,
          autoExtend: true,
        }).acquireOrThrow();
        await new Promise((resolve) => setTimeout(resolve, 700));
        expect(lock.signal.aborted).toBe(false);
        expect(await lock.getStatus()).toBe("ACQUIRED");
      }
      expect(await new Lock({ id, redis: redis(), uuid: "nobody" }).getStatus()).toBe("FREE");
      const next = new Lock({ id, redis: redis(), retry: { attempts: 1 } });
      expect(await next.acquire()).toBe(true);
      await next.release();
    });
  });
}

/**
 * The semaphore contract, given the `redis` option as users pass it. A quorum offers neither fair
 * queues nor fencing tokens.
 */
export function describeSemaphoreContract(
  redis: () => RedisClient | readonly RedisClient[],
  { fencing, fair, extraIds = [] }: LockContractOptions & { readonly fair: boolean },
): void {
  describe("Semaphore with the raw client", () => {
    const ids: [string, () => string][] = [
      ["a plain id", () => uniqueId("semaphore")],
      ...extraIds.map((id): [string, () => string] => [JSON.stringify(id), () => `${id}:semaphore`]),
    ];
    it.each(ids)("admits `limit` holders of %s, extends, reports and releases", async (_name, makeId) => {
      const id = makeId();
      const make = () =>
        new Semaphore({ id, redis: redis(), limit: 2, lease: LEASE_MS, fencing, retry: { attempts: 1 } });
      const [a, b, c] = [make(), make(), make()];
      expect(await a.acquire()).toBe(true);
      expect(await b.acquire()).toBe(true);
      expect(await c.acquire()).toBe(false);
      if (fencing) expect(b.fencingToken).toBeGreaterThan(a.fencingToken as number);
      expect(await a.getStatus()).toBe("ACQUIRED");
      expect(await c.getStatus()).toBe("FREE");
      expect(await b.extend(5_000)).toBe(true);
      expect(b.remainingMs).toBeGreaterThan(LEASE_MS);
      expect(await a.release()).toBe(true);
      expect(await c.acquire()).toBe(true);
      expect(await b.release()).toBe(true);
      expect(await c.release()).toBe(true);
      expect(await a.release()).toBe(false);
    });

    it("a seeded uuid checks, extends and releases a permit taken elsewhere", async () => {
      const id = uniqueId("semaphore-seeded");
      const holder = new Semaphore({ id, redis: redis(), limit: 3 });
      expect(await holder.acquire({ uuid: "123" })).toBe(true);
      const other = new Semaphore({ id, redis: redis(), limit: 3, uuid: "123" });
      expect(await other.getStatus()).toBe("ACQUIRED");
      expect(await other.extend(1_000)).toBe(true);
      expect(await other.release()).toBe(true);
      expect(await holder.getStatus()).toBe("FREE");
    });

    it("never admits more than `limit` of many concurrent acquirers", async () => {
      const id = uniqueId("semaphore-many");
      const semaphores = Array.from(
        { length: 8 },
        () => new Semaphore({ id, redis: redis(), limit: 3, retry: { attempts: 1 } }),
      );
      const won = await Promise.all(semaphores.map((semaphore) => semaphore.acquire()));
      expect(won.filter(Boolean).length).toBeLessThanOrEqual(3);
      expect(won.filter(Boolean).length).toBeGreaterThanOrEqual(1);
      await Promise.all(semaphores.map((semaphore) => semaphore.release()));
    });

    it("auto-extends a short lease through longer work, and await using releases", async () => {
      const id = uniqueId("semaphore-auto");
      {
        await using permit = await new Semaphore({
          id,
          redis: redis(),
          limit: 1,
          lease: 300,
          autoExtend: true,
        }).acquireOrThrow();
        await new Promise((resolve) => setTimeout(resolve, 700));
        expect(permit.signal.aborted).toBe(false);
        expect(await permit.getStatus()).toBe("ACQUIRED");
      }
      expect(await new Semaphore({ id, redis: redis(), limit: 1, retry: { attempts: 1 } }).acquire()).toBe(
        true,
      );
    });

    // A quorum has no fair queue (one per instance would give no single order): not registered there.
    if (!fair) return;
    it("fair: waiters get their permits in the order they arrived", async () => {
      const id = uniqueId("semaphore-fair");
      const options = { id, limit: 1, fair: true, retry: { delay: 50, maxDelay: 500 } };
      const holder = new Semaphore({ ...options, redis: redis() });
      await holder.acquireOrThrow();
      const served: number[] = [];
      const waiting: Promise<void>[] = [];
      const client = redis() as RedisClient;
      const inLine = () =>
        scriptRunnerFor(client, false).run(COUNT_QUEUE, [sameSlotKey(id, ":queue")], []) as Promise<number>;
      for (const index of [0, 1, 2]) {
        waiting.push(
          (async () => {
            const waiter = new Semaphore({ ...options, redis: redis() });
            await waiter.acquireOrThrow({ timeout: 10_000 });
            served.push(index);
            await waiter.release();
          })(),
        );
        // The next waiter starts once this one is in line, however slow its first request.
        while ((await inLine()) < index + 1) await new Promise((resolve) => setTimeout(resolve, 10));
      }
      await holder.release();
      await Promise.all(waiting);
      expect(served).toEqual([0, 1, 2]);
    });
  });
}
