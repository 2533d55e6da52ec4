import { describe, expect, it } from "vitest";
import { scriptRunnerFor } from "../../src/client/script-runner";
import { guessServerKind } from "../../src/client/server";
import type { RedisClient, ScriptArgument, ScriptReply } from "../../src/client/types";
import { Debounce, Lock } from "../../src/index";
import { fenceKey, receiptKey } from "../../src/keys";
import { takeIfFreeOrOwned, takeWithClockFence, takeWithCountedFence } from "../../src/scripts/acquire";
import { allScripts } from "../../src/scripts/all";
import { countCall, isLatestCall } from "../../src/scripts/debounce";
import { addLeaseIfOwned } from "../../src/scripts/extend";
import { deleteIfOwned } from "../../src/scripts/release";
import { renewIfOwned } from "../../src/scripts/renew";
import type { LuaScript } from "../../src/scripts/script";
import { checkOwner } from "../../src/scripts/status";
import { uniqueId } from "../support/redis";

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

  const counter = uniqueId("scripts-counter");
  expect(await run(countCall, [counter], [60_000])).toBe(1);
  expect(await run(countCall, [counter], [60_000])).toBe(2);
  expect(await run(isLatestCall, [counter], [1])).toBe(0);
  expect(await run(isLatestCall, [counter], [2])).toBe(1);
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
