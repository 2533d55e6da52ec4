import type { LockLostError } from "./errors";
import type { QuorumSpec } from "./options";
import type { RedisClient } from "./redis/client";

/** Whether a token holds the lock right now. */
export type LockStatus = "ACQUIRED" | "FREE";

/** How `acquire()` retries while another owner holds the lock. */
export type RetryConfig = {
  /**
   * How many times to try, counting the first; also the most commands a wait costs. No wait
   * follows the last failed try. Any number up to 1 means a single try (0.2 made none for `0`); a
   * fraction rounds up, as in 0.2. `Infinity` tries until the lock is acquired, the `timeout` runs
   * out or the `signal` aborts. With a `timeout` and no `attempts` set anywhere, tries go on until
   * the timeout. A wait that subscribes to release announcements counts the subscription as one.
   * @default 3
   */
  attempts?: number;
  /**
   * Milliseconds to wait after the first failed try; `0` retries at once, as in 0.2.
   * @default 100
   */
  delay?: number;
  /**
   * "fixed" waits `delay` between all tries; "exponential" doubles the wait after each try, up to
   * `maxDelay`. Either way a wait never outlasts the holder's remaining lease, which the failed try
   * learns in the same round trip.
   * @default "fixed"
   */
  backoff?: "fixed" | "exponential";
  /**
   * Longest wait between two tries, in milliseconds; at least `delay`. Also how often a wait that
   * subscribed to release announcements still polls, as a safety net.
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
   * Milliseconds between renewals; less than the lease.
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
   * @default false on Upstash (`server: "upstash"`), which keeps its data; true elsewhere
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
   * Issue a fencing token with each acquisition (`fencingToken`): a number larger than any token
   * issued before for this id. Costs nothing extra on the wire; keeps one more key per id.
   * @default false
   */
  fencing?: boolean | FencingConfig;
  /**
   * Renew the lease in the background while it is held, until release, disposal or loss. `true`
   * renews every third of the lease; `{ interval }` sets the period in milliseconds.
   * @default false
   */
  autoExtend?: boolean | AutoExtendConfig;
  /**
   * Called once if a held lock is lost, with the error the lease's `signal` aborts with. An error
   * it throws is ignored: it must never crash the process from a timer.
   */
  onLost?: (error: LockLostError) => void;
  /**
   * Let long waits subscribe to the lock's release announcements and retry as soon as one arrives,
   * polling only every `retry.maxDelay` meanwhile. A wait subscribes only when that costs fewer
   * commands than polling on its schedule (so never with the default 3 attempts), counting the
   * subscription (a billed SUBSCRIBE on Upstash) as one of its `attempts`; a fair waiter always does.
   * Needs wake-ups on the client (`enableWakeUps(redis)`, once per client); without them waits
   * poll. Fair locks on `@upstash/redis` wake their own waiters without it.
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
   * Cancels the acquisition: waits end at once, and the call rejects with `signal.reason`. A request
   * in flight that turns out to have taken the lock is released in the background.
   */
  signal?: AbortSignal;
};

/** Options of `new Lock(...)` and `new FairLock(...)`. */
export type LockCreateConfig = HoldOptions & {
  /** The lock's name; the Redis key is `prefix` + `id`. */
  id: string;
  /**
   * Prepended to `id` to form the Redis key, to keep the lock's keys apart from others, e.g.
   * `"locks:"`. Locks exclude each other only when their keys are equal.
   * @default ""
   */
  prefix?: string;
  /**
   * The Redis client, passed as is: `@upstash/redis` (`Redis.fromEnv()`), ioredis (`Redis` or
   * `Cluster`), node-redis (`createClient`, `createCluster`), or any client with
   * `eval(script, keys, args)`; or `quorum([...clients])`, an odd number of clients of independent
   * Redis servers, for a lock held only while a majority of them hold it.
   */
  redis: RedisClient | QuorumSpec;
  /**
   * The token of a lock acquired elsewhere, so this instance can `release()`, `extend()` and
   * `getStatus()` it without calling `acquire()`. An empty string means none.
   */
  uuid?: string;
  /**
   * The kind of server behind `redis`. On "upstash" every script carries Upstash's
   * `allow-key-locking` flag, so it locks only the lock's own keys instead of the whole database,
   * and fencing tokens come from a counter alone. On "redis" scripts are plain. A server that
   * refuses the flag gets plain scripts from then on, after one extra request.
   * @default "upstash" for `@upstash/redis` and for an ioredis or node-redis client whose host ends
   *   in `.upstash.io`; "redis" otherwise
   */
  server?: "upstash" | "redis";
  /**
   * Receives every piece of work the lock leaves running in the background (undoing a try that
   * answered after its acquire gave up, finishing a release that outlived its lease), so a
   * serverless platform keeps the function alive until it settles: Vercel's `waitUntil` from
   * `@vercel/functions`, or a Worker's `ctx.waitUntil.bind(ctx)`. The promises never reject.
   */
  waitUntil?: (promise: Promise<unknown>) => void;
};

/** Options of `new Semaphore(...)`: a lock's, plus how many may hold it at once and whether they queue. */
export type SemaphoreCreateConfig = Omit<LockCreateConfig, "uuid"> & {
  /**
   * How many holders at once: a positive integer, at most 1000 (an acquire sends every permit's
   * key, so a large limit makes large requests).
   */
  limit: number;
  /**
   * Serve waiters in the order they arrived (see `FairLock`).
   * @default false
   */
  fair?: boolean;
};

/** Options of `new Debounce(...)`. */
export type DebounceConfig<Args extends unknown[] = unknown[]> = {
  /** The debouncer's name; the Redis key of its call counter is `prefix` + `id`. */
  id: string;
  /**
   * Prepended to `id` to form the Redis key.
   * @default ""
   */
  prefix?: string;
  /** The Redis client; see {@link LockCreateConfig.redis} (a quorum is not taken). */
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
  callback: (...args: Args) => unknown;
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
   * Declared empty so that the declarations compile for consumers with neither the DOM lib nor
   * @types/node (`lib: ["es2022"]`); it merges with the real AbortSignal wherever one exists.
   */
  interface AbortSignal {}
}
