import { Redis as IoRedis } from "ioredis";
import { afterAll, expect } from "vitest";
import { FairLock, Lock, type LockAcquireConfig, type RedisClient } from "../../../src/index";
import { uniqueId } from "../../support/redis";
import type { ClientName, useBothClients } from "./both-clients";
import { useWire } from "./endpoints";
import { pause } from "./time";

/** The kinds whose acquisitions of one uuid share its hold the same way: each case runs over both. */
export const lockKinds = [
  ["Lock", Lock],
  ["FairLock", FairLock],
] as const;

/** A lock kind of `lockKinds`. */
export type LockKind = (typeof lockKinds)[number][1];

/** The clients each case runs over. */
export const clientNames = ["ioredis", "upstash"] as const satisfies readonly ClientName[];

/** A fresh key and uuid for one case, and the losses its leases are told, in order, as "label reason". */
export interface SharedUuidCase {
  readonly id: string;
  readonly uuid: string;
  readonly lost: string[];
  /** An `onLost` that logs the loss under `label`. */
  told(label: string): (error: { readonly reason: string }) => void;
}

/** Starts a case on a fresh key, named after `prefix`. */
export function sharedUuidCase(prefix: string): SharedUuidCase {
  const lost: string[] = [];
  return {
    id: uniqueId(prefix),
    uuid: crypto.randomUUID(),
    lost,
    told: (label) => (error) => {
      lost.push(`${label} ${error.reason}`);
    },
  };
}

/** A client whose next command fails, and the way to make it so. */
export interface FailingClient {
  readonly redis: RedisClient;
  /** Makes the next command fail: a 5xx from the proxy, or a frozen Redis past a 300 ms command timeout. */
  failNext(): void;
  /** Undoes `failNext` (a frozen Redis thaws); harmless when nothing failed. */
  recover(): void;
}

/**
 * Clients whose commands can be made to fail, per name: @upstash/redis through a faulty wire, ioredis with a
 * 300 ms `commandTimeout` over a Redis that freezes. Call at the top of the file, after `useBothClients`.
 */
export function useFailingClients(
  both: ReturnType<typeof useBothClients>,
): (name: ClientName) => FailingClient {
  const wire = useWire(() => both.stack().endpoint);
  const opened: IoRedis[] = [];
  afterAll(() => {
    for (const client of opened) client.disconnect();
  });
  const recover = (): void => both.stack().redis.thaw();
  return (name) => {
    if (name === "upstash") {
      return { redis: wire().faulty, failNext: () => wire().passThrough.faults.status5xx(1), recover };
    }
    const client = new IoRedis(both.stack().redis.url, { commandTimeout: 300 });
    client.on("error", () => {});
    opened.push(client);
    return { redis: client, failNext: () => both.stack().redis.freeze(), recover };
  };
}

/** A scope: `work` runs under an acquisition that its end ends, and is given the lease's signal. */
export type Scope = (
  lock: Lock,
  config: LockAcquireConfig,
  work: (signal: AbortSignal) => unknown,
) => Promise<void>;

/** A `runExclusive` scope. */
const inRunExclusive: Scope = async (lock, config, work) => {
  await lock.runExclusive((signal) => work(signal), config);
};

/** An `await using` block on what `acquireOrThrow()` resolved with. */
const inAwaitUsing: Scope = async (lock, config, work) => {
  await using held = await lock.acquireOrThrow(config);
  await work(held.signal); // the lease just acquired: the instance's current one
};

/** The two ways a caller ends its own acquisition: scope cases run over both. */
export const scopeKinds = [
  ["runExclusive", inRunExclusive],
  ["await using", inAwaitUsing],
] as const;

/**
 * Runs a scope (`runExclusive` unless `scope` says otherwise) of the case's uuid on `lock` (its losses told
 * as "scope") whose work makes a plain acquire of the uuid (told as "plain"), then `thenInScope`. Returns
 * the plain lease's signal, and the losses told by the time the scope ended.
 */
export async function plainAcquireInScope(
  lock: Lock,
  { uuid, lost, told }: SharedUuidCase,
  thenInScope: () => unknown,
  scope: Scope = inRunExclusive,
): Promise<{ plain: AbortSignal; afterScope: { lost: string[]; aborted: boolean } }> {
  let plain: AbortSignal | undefined;
  await scope(lock, { uuid, onLost: told("scope") }, async () => {
    expect(await lock.acquire({ uuid, onLost: told("plain") })).toBe(true);
    plain = lock.signal;
    await thenInScope();
  });
  if (plain === undefined) throw new Error("the scope's work did not run");
  return { plain, afterScope: { lost: [...lost], aborted: plain.aborted } };
}

/**
 * Asserts that a scope's end released the hold quietly: nobody was told a loss by then or in the 50 ms after,
 * the plain lease's signal is untouched, and the key (read by `key`, the test's own connection) is gone.
 */
export async function expectQuietEnd(
  { lost }: SharedUuidCase,
  { plain, afterScope }: Awaited<ReturnType<typeof plainAcquireInScope>>,
  key: () => Promise<string | null>,
): Promise<void> {
  await pause(50);
  expect({ afterScope, lost, aborted: plain.aborted, key: await key() }).toEqual({
    afterScope: { lost: [], aborted: false },
    lost: [],
    aborted: false,
    key: null,
  });
}
