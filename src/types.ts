import type { RedisClient } from "./client/types";
import type { LockLostError } from "./errors";

/** Whether this lock's token holds the key right now. */
export type LockStatus = "ACQUIRED" | "FREE";

/** How `acquire()` retries while another owner holds the lock. */
export type RetryConfig = {
  /**
   * How many times to try, counting the first try; also the most commands a wait costs. There is
   * no wait after the last failed try. Any number up to 1 means a single try (0.2 returned `false`
   * without trying when given `0`); a fraction rounds up, as in 0.2. `Infinity` tries until the
   * lock is acquired, the `timeout` runs out or the `signal` aborts; with a `timeout` and no
   * `attempts` set anywhere, tries continue until the timeout. When a long wait subscribes to the
   * lock's release announcements (see `wakeOnRelease`), the subscription counts as one attempt.
   * @default 3
   */
  attempts?: number;
  /**
   * Milliseconds to wait after the first failed try; `0` retries at once, as in 0.2.
   * @default 100
   */
  delay?: number;
  /**
   * "fixed" waits `delay` between all tries; "exponential" doubles the wait after each try, up
   * to `maxDelay`. Either way a wait never outlasts the holder's remaining lease, which the failed
   * try learns in the same round trip.
   * @default "fixed"
   */
  backoff?: "fixed" | "exponential";
  /**
   * Longest wait between two tries, in milliseconds; at least `delay`.
   * @default 10 × delay
   */
  maxDelay?: number;
  /**
   * Fraction of each wait, from 0 to 1, replaced by a random amount, so that waiters started
   * together do not retry in lockstep. `0.5` waits between half and all of the computed delay.
   * @default 0
   */
  jitter?: number;
};

/** Settings of automatic lease renewal. */
export type AutoExtendConfig = {
  /**
   * Milliseconds between renewals; must be less than the lease.
   * @default a third of the lease
   */
  interval?: number;
};

/** Settings of fencing tokens. */
export type FencingConfig = {
  /**
   * Never issue a token below the server's clock in microseconds, so tokens keep increasing even
   * if the counter key is lost (a restart without persistence, an eviction). Reads the clock
   * (`TIME`) in the acquire script, which Upstash asks scripts not to do; without it, tokens come
   * from a counter that never expires.
   * @default false on Upstash (`server: "upstash"`), which persists its data; true elsewhere
   */
  clockFloor?: boolean;
};

/** Options that can be set on the lock and overridden for one acquisition. */
export type HoldOptions = {
  /**
   * How long an acquired lock is held before Redis expires it, in milliseconds.
   * @default 10000
   */
  lease?: number;
  /** How `acquire()` retries while another owner holds the lock. */
  retry?: RetryConfig;
  /**
   * Issue a fencing token with each acquisition (`lock.fencingToken`): a number larger than any
   * token issued before for this id. Costs nothing extra on the wire; keeps one more key per id
   * (see {@link FencingConfig} for how tokens stay increasing).
   * @default false
   */
  fencing?: boolean | FencingConfig;
  /**
   * Renew the lease in the background while the lock is held, until release, disposal or loss.
   * `true` renews every third of the lease; `{ interval }` sets the period in milliseconds.
   * @default false
   */
  autoExtend?: boolean | AutoExtendConfig;
  /**
   * Called once if a held lock is lost, with the same error `lock.signal` aborts with. An error
   * it throws is ignored: it must never crash the process from a timer.
   */
  onLost?: (error: LockLostError) => void;
  /**
   * Let long waits subscribe to the lock's release announcements and retry as soon as one arrives,
   * polling only now and then (every `retry.maxDelay`) in the meantime. A wait subscribes only when
   * that costs fewer commands than polling on its schedule, counting the subscription (a billed
   * SUBSCRIBE on Upstash) as one of its `attempts`: with the default 3 attempts it never does.
   * Off automatically when the client cannot subscribe (a plain `eval` client). The subscription is
   * an SSE stream with `@upstash/redis` and one shared connection per client with ioredis and
   * node-redis, shared by the process's waiters on the same lock.
   * @default true
   */
  wakeOnRelease?: boolean;
};

/** Per-call options of `acquire()`, `acquireOrThrow()` and `runExclusive()`; they apply to that call only. */
export type LockAcquireConfig = HoldOptions & {
  /**
   * The token to hold the lock with, instead of a fresh random one. Hand it to another process
   * (as `new Lock({ id, redis, uuid })`) so that process can release or extend this lock. An
   * empty string draws a fresh one, as in 0.2.
   * @example await lock.acquire({ uuid: crypto.randomUUID() })
   */
  uuid?: string;
  /**
   * Total time budget for the acquisition, in milliseconds, on a monotonic clock: the call settles
   * by then. A request still in flight is abandoned, and if it turns out to have taken the lock, it
   * is released in the background (see `waitUntil`).
   */
  timeout?: number;
  /**
   * Cancels the acquisition: waits end at once, and the call rejects with `signal.reason`. A
   * request in flight that turns out to have taken the lock is released in the background.
   */
  signal?: AbortSignal;
};

/** Options of `new Lock(...)`. */
export type LockCreateConfig = HoldOptions & {
  /** The lock's name; the Redis key is `prefix` + `id` (just `id` by default, as in 0.2). */
  id: string;
  /**
   * Prepended to `id` to form the Redis key, to keep the lock's keys apart from others, e.g.
   * `"locks:"`. Lock instances exclude each other only when their keys are equal.
   * @default ""
   */
  prefix?: string;
  /**
   * The Redis client, passed as is: `@upstash/redis` (`Redis.fromEnv()`), ioredis (`Redis` or
   * `Cluster`), node-redis (`createClient`, `createCluster`), or any client with
   * `eval(script, keys, args)`. An array of an odd number of clients, each connected to an
   * independent Redis, makes a quorum lock: held only while a majority of them hold it.
   */
  redis: RedisClient | readonly RedisClient[];
  /**
   * The token of a lock acquired elsewhere, so this instance can `release()`, `extend()` and
   * `getStatus()` it without calling `acquire()`. An empty string means none.
   */
  uuid?: string;
  /**
   * The kind of server behind `redis`. On "upstash" every script carries Upstash's
   * `allow-key-locking` flag, so it locks only the lock's own keys instead of the whole database
   * while it runs, and fencing tokens come from a counter alone. On "redis" (Redis, Valkey,
   * Dragonfly, a cluster) scripts are plain. A server that refuses the flag gets plain scripts from
   * then on, after one extra request.
   * @default "upstash" for an `@upstash/redis` client and for an ioredis or node-redis client whose
   *   host ends in `.upstash.io`; "redis" otherwise
   */
  server?: "upstash" | "redis";
  /**
   * Serve waiters in the order they arrived: they queue in Redis, and when the lock is freed only the
   * first in line may take it. Its turn is announced to it alone, so a release wakes one waiter,
   * not all. A waiter that gives up leaves the line; one that dies keeps its place until it expires:
   * `retry.maxDelay` plus 2 s after its last try. An unfair acquire on the same key (a `Lock`
   * without `fair`, or 0.2's) ignores the line and takes a free lock when it finds one. Not with a
   * quorum.
   * @default false
   */
  fair?: boolean;
  /**
   * Receives every piece of work the lock leaves running in the background (the release of a
   * token whose acquire was abandoned or timed out), so a serverless platform keeps the function
   * alive until it settles: pass Vercel's `waitUntil` from `@vercel/functions`, or a Worker's
   * `ctx.waitUntil.bind(ctx)`. The promises never reject. `lock.pending` offers the same as one promise.
   */
  waitUntil?: (promise: Promise<unknown>) => void;
};

/** Options of `new Semaphore(...)`: a lock's, plus how many may hold it at once. */
export type SemaphoreCreateConfig = LockCreateConfig & {
  /**
   * How many holders at once: a positive integer, at most 1000 (every acquire sends every permit's
   * key, so a large limit makes large requests).
   */
  limit: number;
};

/** Options of `new Debounce(...)`. */
export type DebounceConfig = {
  /** The debouncer's name; the Redis key of its call counter is `prefix` + `id`. */
  id: string;
  /**
   * Prepended to `id` to form the Redis key.
   * @default ""
   */
  prefix?: string;
  /** The Redis client; see {@link LockCreateConfig.redis}. */
  redis: RedisClient;
  /** The kind of server behind `redis`; see {@link LockCreateConfig.server}. */
  server?: "upstash" | "redis";
  /**
   * Quiet time, in milliseconds: the callback runs only for a call that no other call followed
   * within this time.
   * @default 1000
   */
  wait?: number;
  /** The function to run; it receives the arguments of the `call()` that won. */
  // biome-ignore lint/suspicious/noExplicitAny: the callback's arguments are whatever the caller passes to call().
  callback: (...args: any[]) => unknown;
};

/**
 * The internal configuration shape 0.2 exported. Kept so that code importing the name still
 * compiles; nothing in the library accepts or returns it.
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
  /**
   * Declared empty so that the type declarations compile for consumers with neither the DOM lib
   * nor @types/node (`lib: ["es2022"]`); it merges with the real AbortSignal wherever one exists.
   */
  interface AbortSignal {}
}
