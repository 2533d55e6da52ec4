import type { LockLostError } from "./errors";
import type { QuorumSpec } from "./options";
import type { RedisClient } from "./redis/client";

/** Whether a token holds the lock right now. */
export type LockStatus = "ACQUIRED" | "FREE";

/**
 * How `acquire()` retries while another owner holds the lock. `attempts` and `delay` are required here, as in
 * 0.2's type, so code reading them still compiles; the `retry` option takes any of the fields (`Partial`).
 */
export type RetryConfig = {
  /**
   * How many times to try, counting the first; also the most commands a wait costs while Redis answers in
   * time (undoing a try given up on, a NOSCRIPT answer, a fair waiter leaving its line cost more: see
   * docs/upstash.md). No wait follows the last failed try. Up to 1 means one try (0.2 made none for `0`); a
   * fraction rounds up, as in 0.2. `Infinity` tries until acquired, the `timeout` runs out or the `signal`
   * aborts, as do tries with a `timeout` and no `attempts` set anywhere. A wait subscribing to release
   * announcements counts it as one, two over TCP when it first unsubscribes the oldest of 32 idle channels
   * (whether Upstash bills a stream's close too is not documented: docs/api.md). @default 3
   */
  attempts: number;
  /** Milliseconds to wait after the first failed try; `0` retries at once, as in 0.2. @default 100 */
  delay: number;
  /**
   * "fixed" waits `delay` between all tries; "exponential" doubles the wait after each try, up to `maxDelay`.
   * A wait never outlasts the holder's remaining lease, learnt by the failed try itself. @default "fixed"
   */
  backoff?: "fixed" | "exponential";
  /**
   * Longest wait between tries (ms), ≥ `delay`; also how often a subscribed wait polls. @default 10 × delay,
   * at least 1
   */
  maxDelay?: number;
  /**
   * Fraction of each wait, from 0 to 1, replaced by a random amount, so waiters started together do not retry
   * in lockstep: `0.5` waits between half and all of the computed delay. @default 0
   */
  jitter?: number;
};

/** Settings of automatic lease renewal. */
export type AutoExtendConfig = {
  /** Milliseconds between renewals; less than the lease. @default a third of the lease */
  interval?: number;
};

/** Settings of fencing tokens. */
export type FencingConfig = {
  /**
   * Never issue a token below the server's clock in microseconds, so tokens keep increasing even if the
   * counter key is lost (a restart without persistence, an eviction). Reads the clock (`TIME`) in the
   * acquire script, which Upstash asks scripts not to do; without it, tokens come from an unexpiring counter.
   * @default false on Upstash (`server: "upstash"`), which keeps its data; true elsewhere
   */
  clockFloor?: boolean;
};

/** Options that can be set on the lock and overridden for one acquisition. */
export type HoldOptions = {
  /** How long an acquired lock is held before Redis expires it, in milliseconds. @default 10000 */
  lease?: number;
  /** How `acquire()` retries while another owner holds the lock; each field has its default. */
  retry?: Partial<RetryConfig>;
  /**
   * Issue a fencing token with each acquisition (`fencingToken`): a number larger than any token issued
   * before for this id. Costs nothing extra on the wire; keeps one more key per id. @default false
   */
  fencing?: boolean | FencingConfig;
  /**
   * Renew the lease in the background while it is held, until release, disposal or loss. `true` renews every
   * third of the lease; `{ interval }` sets the period in milliseconds. @default false
   */
  autoExtend?: boolean | AutoExtendConfig;
  /**
   * Called once if a held lock is lost, with the error the lease's `signal` aborts with. An error it
   * throws is ignored: it must never crash the process from a timer.
   */
  onLost?: (error: LockLostError) => void;
  /**
   * Subscribe long waits to the lock's release announcements, to retry as one arrives and poll only every
   * `retry.maxDelay`; only when cheaper than polling (never with the default 3 attempts), counting the
   * subscription (a billed SUBSCRIBE on Upstash) as one of the `attempts`. Fair waiters do whatever the cost,
   * with two attempts left. Needs
   * `enableWakeUps(redis)` once per client, else waits poll; fair locks on `@upstash/redis` wake their own.
   * @default true
   */
  wakeOnRelease?: boolean;
};

/** Per-call options of `acquire()`, `acquireOrThrow()` and `runExclusive()`; they apply to that call only. */
export type LockAcquireConfig = HoldOptions & {
  /**
   * The token to hold the lock with, instead of a fresh random one; hand it to another process (as
   * `new Lock({ id, redis, uuid })`) to release or extend the lock there. `""` draws one, as in 0.2.
   * @example await lock.acquire({ uuid: crypto.randomUUID() })
   */
  uuid?: string;
  /**
   * Time budget for the acquisition in milliseconds, on a monotonic clock: the call settles by then. A
   * request in flight is abandoned, and released in the background if it took the lock (see `waitUntil`).
   */
  timeout?: number;
  /**
   * Cancels the acquisition: waits end at once, and the call rejects with `signal.reason`. A request in
   * flight that turns out to have taken the lock is released in the background.
   */
  signal?: AbortSignal;
};

/** Options of `new Lock(...)` and `new FairLock(...)`. */
export type LockCreateConfig = HoldOptions & {
  /** The lock's name; the Redis key is `prefix` + `id`. */
  id: string;
  /**
   * Prepended to `id` to form the Redis key, e.g. `"locks:"`; locks exclude each other only on equal keys.
   * @default ""
   */
  prefix?: string;
  /**
   * The Redis client, passed as is: `@upstash/redis` (`Redis.fromEnv()`), ioredis (`Redis` or `Cluster`),
   * node-redis (`createClient`, `createCluster`), or any client with `eval(script, keys, args)`; or
   * `quorum([...clients])` of an odd number of independent servers: held only while a majority holds it.
   */
  redis: RedisClient | QuorumSpec;
  /** Token of a lock acquired elsewhere, to `release()`, `extend()` or `getStatus()` it; `""` means none. */
  uuid?: string;
  /**
   * The kind of server behind `redis`. On "upstash" every script carries Upstash's `allow-key-locking`
   * flag, to lock only the lock's own keys, not the whole database, and fencing tokens come from a counter
   * alone; on "redis" scripts are plain. One refusing the flag costs one extra request, then gets plain ones.
   * @default "upstash" for `@upstash/redis` or an ioredis/node-redis client on `*.upstash.io`; else "redis"
   */
  server?: "upstash" | "redis";
  /**
   * Receives all work the lock leaves running in the background (undoing a try answered after its acquire
   * gave up, finishing a release that outlived its lease) so a serverless function lives until it settles:
   * `waitUntil` from `@vercel/functions`, or a Worker's `ctx.waitUntil.bind(ctx)`. Its promises never reject.
   */
  waitUntil?: (promise: Promise<unknown>) => void;
};

/** Options of `new Semaphore(...)`: a lock's, plus how many may hold it at once and whether they queue. */
export type SemaphoreCreateConfig = Omit<LockCreateConfig, "uuid"> & {
  /** How many holders at once: a positive integer, at most 1000 (an acquire sends every permit's key). */
  limit: number;
  /** Serve waiters in the order they arrived (see `FairLock`). @default false */
  fair?: boolean;
};

/** Options of `new Debounce(...)`. */
// biome-ignore lint/suspicious/noExplicitAny: 0.2's callback took `any[]`: its callers' typed callbacks must still compile.
export type DebounceConfig<Args extends unknown[] = any[]> = {
  /** The debouncer's name; the Redis key of its call counter is `prefix` + `id`. */
  id: string;
  /** Prepended to `id` to form the Redis key. @default "" */
  prefix?: string;
  /** The Redis client; see {@link LockCreateConfig.redis} (a quorum is not taken). */
  redis: RedisClient;
  /** The kind of server behind `redis`; see {@link LockCreateConfig.server}. */
  server?: "upstash" | "redis";
  /** Quiet time in ms: the callback runs only for a call that no other followed within it. @default 1000 */
  wait?: number;
  /** The function to run; it receives the arguments of the `call()` that won. */
  callback: (...args: Args) => unknown;
};

/**
 * The internal configuration shape 0.2 exported, kept so imports compile; the library never uses it.
 * @deprecated Use {@link LockCreateConfig}.
 */
export type LockConfig = {
  redis: RedisClient;
  id: string;
  lease: number;
  UUID: string | null;
  retry: { attempts: number; delay: number };
};

declare global {
  /** Empty, so declarations compile without the DOM lib or `@types/node`; it merges with the real one. */
  interface AbortSignal {}
}
