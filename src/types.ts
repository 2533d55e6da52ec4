import type { EvalClient } from "./client/redis-client";

/** Whether this lock's token holds the key right now. */
export type LockStatus = "ACQUIRED" | "FREE";

/** How `acquire()` retries while another owner holds the lock. */
export type RetryConfig = {
  /**
   * How many times to try, counting the first try. There is no wait after the last failed try.
   * `0` and `1` both mean a single try (0.2 returned `false` without trying when given `0`).
   * @default 3
   */
  attempts?: number;
  /**
   * Milliseconds to wait between tries.
   * @default 100
   */
  delay?: number;
};

/** Per-call options of `acquire()` and `acquireOrThrow()`; they apply to that call only. */
export type LockAcquireConfig = {
  /**
   * How long the lock is held before Redis expires it, in milliseconds.
   * @default the lock's `lease` (10000)
   */
  lease?: number;
  /** Overrides the lock's retry policy for this call; unset fields keep the lock's values. */
  retry?: RetryConfig;
  /**
   * The token to hold the lock with, instead of a fresh random one. Hand it to another process
   * (as `new Lock({ id, redis, uuid })`) so that process can release or extend this lock.
   * @example await lock.acquire({ uuid: crypto.randomUUID() })
   */
  uuid?: string;
};

/** Options of `new Lock(...)`. */
export type LockCreateConfig = {
  /** The lock's name, used as the Redis key as is (as in 0.2). */
  id: string;
  /**
   * The Redis client, for example `Redis.fromEnv()` from `@upstash/redis`, or any client with
   * `eval(script, keys, args)`.
   */
  redis: EvalClient;
  /**
   * How long an acquired lock is held before Redis expires it, in milliseconds.
   * @default 10000
   */
  lease?: number;
  /**
   * How `acquire()` retries while another owner holds the lock.
   * @default { attempts: 3, delay: 100 }
   */
  retry?: RetryConfig;
  /**
   * The token of a lock acquired elsewhere, so this instance can `release()`, `extend()` and
   * `getStatus()` it without calling `acquire()`.
   */
  uuid?: string;
};

/** Options of `new Debounce(...)`. */
export type DebounceConfig = {
  /** The debouncer's name, used as the Redis key of its call counter. */
  id: string;
  /** The Redis client; see {@link LockCreateConfig.redis}. */
  redis: EvalClient;
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
  redis: EvalClient;
  id: string;
  lease: number;
  UUID: string | null;
  retry: Required<RetryConfig>;
};
