import { Lock as Lock021 } from "@upstash/lock-0.2.1";
import type { Redis as UpstashRedis } from "@upstash/redis";
import type { Redis as IORedis } from "ioredis";
import { Mutex, Semaphore as RedisSemaphore } from "redis-semaphore";
import Redlock, { type Lock as RedlockLock } from "redlock";
import { FairLock, type Lease, Lock, Semaphore } from "../dist/index.js";
import type { ClientPair, Clients } from "./clients";
import { evalClientRecorder, mirrorOfOurCommands, wrappedRecorder } from "./mirror";

/** Every lock implementation the benchmark drives, over HTTP (`@upstash/redis`) or TCP (ioredis). */
export type VariantId =
  | "ours"
  | "ours-wake"
  | "ours-poll"
  | "ours-fair"
  | "v021"
  | "v021-d100"
  | "v021-d10"
  | "redlock"
  | "semaphore"
  | "raw-ours"
  | "raw-v021"
  | "sem-ours"
  | "sem-ours-fair"
  | "sem-redis-semaphore";

export type Transport = "http" | "tcp";

/** One lock held by one process: take it, then free it. */
export interface LockHandle {
  acquire(): Promise<boolean>;
  release(): Promise<unknown>;
}

export const VARIANT_LABELS: Record<VariantId, string> = {
  ours: "ours",
  // `enableWakeUps(redis)`: a long wait on a lock one holder keeps subscribes to its releases.
  "ours-wake": "ours, wake-ups (`enableWakeUps`)",
  // Nothing enabled: what `new Lock({ id, redis })` does, polling every `retry.delay`.
  "ours-poll": "ours, defaults (polling 100 ms)",
  // Waiters queue in Redis; each subscribes after its first failed try and is woken on its turn alone.
  "ours-fair": "ours, fair (`FairLock`, `enableWakeUps`)",
  v021: "0.2.1",
  "v021-d100": "0.2.1, polling 100 ms",
  "v021-d10": "0.2.1, polling 10 ms",
  redlock: "redlock 5.0.0-beta.2, 200±100 ms",
  semaphore: "redis-semaphore 5.8.0 Mutex, 10 ms",
  "raw-ours": "raw client, ours' commands",
  "raw-v021": "raw client, 0.2.1's commands",
  "sem-ours": "ours Semaphore, wake-ups (`enableWakeUps`)",
  "sem-ours-fair": "ours Semaphore, fair (`fair: true`, `enableWakeUps`)",
  "sem-redis-semaphore": "redis-semaphore 5.8.0 Semaphore, 10 ms",
};

/** Ours with wake-ups: on the clients `enableWakeUps` was called for (see {@link Clients}). */
export const WAKE_UP_VARIANTS: ReadonlySet<VariantId> = new Set<VariantId>([
  "ours-wake",
  "ours-fair",
  "sem-ours",
  "sem-ours-fair",
]);

/** The `limit` of every semaphore variant: how many workers may hold a permit at once. */
export const SEMAPHORE_LIMIT = 3;

/** How many holders `variant` admits at once: 1 for a lock, {@link SEMAPHORE_LIMIT} for a semaphore. */
export function permitsOf(variant: VariantId): number {
  return variant.startsWith("sem-") ? SEMAPHORE_LIMIT : 1;
}

/** The lease every variant uses, milliseconds (0.2's default). */
export const LEASE_MS = 10_000;
/** Tries enough to wait as long as any benchmark point lasts. */
export const WAIT_ATTEMPTS = 1_000_000;

/** 0.2.1's release script, byte for byte, for the raw variant that sends 0.2.1's commands. */
const RELEASE_SCRIPT_021 = `
      -- Check if the current UUID still holds the lock
      if redis.call("get", KEYS[1]) == ARGV[1] then
        return redis.call("del", KEYS[1])
      else
        return 0
      end
     `;

/**
 * A lock of `variant` on `key`. With `wait`, acquire waits for as long as it takes (contention);
 * without, each library keeps its defaults (uncontended latency).
 */
export async function lockHandle(
  variant: VariantId,
  transport: Transport,
  clients: Clients,
  key: string,
  wait: boolean,
): Promise<LockHandle> {
  if (variant === "raw-ours") return rawOurs(transport, clients, key);
  const pair: ClientPair = WAKE_UP_VARIANTS.has(variant) ? clients.wakeUps : clients;
  if (transport === "http") return httpHandle(variant, need(pair.upstash, "HTTP"), key, wait);
  return tcpHandle(variant, need(pair.ioredis, "TCP"), key, wait);
}

function need<T>(client: T | undefined, what: string): T {
  if (client === undefined) throw new Error(`no ${what} client in this process`);
  return client;
}

/** Ours, as `variant` makes it: a Lock, a FairLock or a Semaphore (fair or not), waiting as long as needed with `wait`. */
function oursHandle(
  variant: VariantId,
  redis: UpstashRedis | IORedis,
  key: string,
  wait: boolean,
): LockHandle {
  const config = { id: key, redis, lease: LEASE_MS };
  const acquireConfig = wait ? { retry: { attempts: WAIT_ATTEMPTS } } : undefined;
  if (permitsOf(variant) > 1) {
    const semaphore = new Semaphore({
      ...config,
      limit: permitsOf(variant),
      fair: variant === "sem-ours-fair",
    });
    let lease: Lease | undefined;
    return {
      acquire: async () => {
        lease = await semaphore.acquire(acquireConfig);
        return lease !== undefined;
      },
      release: () => lease?.release() ?? Promise.resolve(false),
    };
  }
  const lock = variant === "ours-fair" ? new FairLock(config) : new Lock(config);
  return { acquire: () => lock.acquire(acquireConfig), release: () => lock.release() };
}

function httpHandle(variant: VariantId, redis: UpstashRedis, key: string, wait: boolean): LockHandle {
  switch (variant) {
    case "ours":
    case "ours-wake":
    case "ours-poll":
    case "ours-fair":
    case "sem-ours":
    case "sem-ours-fair":
      return oursHandle(variant, redis, key, wait);
    case "v021":
    case "v021-d100":
    case "v021-d10": {
      const delay = variant === "v021-d10" ? 10 : 100;
      const lock = new Lock021({
        id: key,
        redis,
        lease: LEASE_MS,
        ...(wait ? { retry: { attempts: WAIT_ATTEMPTS, delay } } : {}),
      });
      return { acquire: () => lock.acquire(), release: () => lock.release() };
    }
    case "raw-v021": {
      let token = "";
      return {
        acquire: async () => {
          token = crypto.randomUUID();
          return (await redis.set(key, token, { nx: true, px: LEASE_MS })) === "OK";
        },
        release: () => redis.eval(RELEASE_SCRIPT_021, [key], [token]),
      };
    }
    default:
      throw new Error(`${variant} does not run over HTTP`);
  }
}

function tcpHandle(variant: VariantId, redis: IORedis, key: string, wait: boolean): LockHandle {
  switch (variant) {
    case "ours":
    case "ours-wake":
    case "ours-poll":
    case "ours-fair":
    case "sem-ours":
    case "sem-ours-fair":
      return oursHandle(variant, redis, key, wait);
    case "redlock": {
      // retryCount -1 retries forever; the delay and jitter stay redlock's defaults.
      const redlock = new Redlock([redis], wait ? { retryCount: -1 } : {});
      let held: RedlockLock | undefined;
      return {
        acquire: async () => {
          held = await redlock.acquire([key], LEASE_MS);
          return true;
        },
        release: () => (held as RedlockLock).release(),
      };
    }
    case "semaphore": {
      const mutex = new Mutex(redis, key, {
        lockTimeout: LEASE_MS,
        ...(wait ? { acquireTimeout: 3_600_000 } : {}),
      });
      return { acquire: () => mutex.tryAcquire(), release: () => mutex.release() };
    }
    case "sem-redis-semaphore": {
      // Its default retry interval (10 ms); it has no fair variant any more: 5.x removed
      // FairSemaphore, its README saying the plain Semaphore (ZCARD over a sorted set) is as fair.
      const semaphore = new RedisSemaphore(redis, key, SEMAPHORE_LIMIT, {
        lockTimeout: LEASE_MS,
        ...(wait ? { acquireTimeout: 3_600_000 } : {}),
      });
      return { acquire: () => semaphore.tryAcquire(), release: () => semaphore.release() };
    }
    default:
      throw new Error(`${variant} does not run over TCP`);
  }
}

/** The raw client sending our Lock's commands, learnt by recording them (see {@link mirrorOfOurCommands}). */
async function rawOurs(transport: Transport, clients: Clients, key: string): Promise<LockHandle> {
  if (transport === "tcp") {
    const redis = need(clients.ioredis, "TCP");
    const duplicate = redis.duplicate();
    try {
      return await mirrorOfOurCommands(redis, wrappedRecorder(duplicate as never), key, LEASE_MS);
    } finally {
      duplicate.disconnect();
    }
  }
  const redis = need(clients.upstash, "HTTP");
  return mirrorOfOurCommands(redis, evalClientRecorder(redis as never), key, LEASE_MS);
}
