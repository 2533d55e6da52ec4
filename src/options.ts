import type { BackoffPolicy } from "./backoff";
import { assertEvalClient } from "./client/script-runner";
import type { ServerKind } from "./client/server";
import { describeValue } from "./describe-value";
import type { LockLostError } from "./errors";
import type { HoldOptions, LockAcquireConfig, LockCreateConfig, RetryConfig } from "./types";
import {
  assertFunction,
  assertNonNegativeNumber,
  assertOptionalObject,
  assertPositiveInteger,
  assertString,
} from "./validate";

/** Defaults of every lock option; the first three are 0.2's. */
export const LOCK_DEFAULTS = Object.freeze({
  lease: 10_000,
  attempts: 3,
  delay: 100,
  backoff: "fixed" as const,
  /** `maxDelay` defaults to this many times `delay`. */
  maxDelayFactor: 10,
  jitter: 0,
  /** `autoExtend` renews this many times per lease by default. */
  renewalsPerLease: 3,
});

/**
 * How long a fair waiter's place in line outlives its longest wait between tries, in ms: a margin
 * for a slow request and for the clocks of the waiters differing (deadlines are on their own
 * clocks). A waiter that left or died holds up the line for at most its wait plus this.
 */
export const QUEUE_GRACE_MS = 2_000;

/** The options a lock keeps: validated, with defaults applied only where they cannot depend on a call. */
export interface LockSettings {
  readonly id: string;
  /** The Redis key: `prefix` + `id`. */
  readonly key: string;
  /** How many independent Redis instances the lock is held on: 1, or an odd quorum size. */
  readonly instances: number;
  /** The seeded token, if any (an empty string, as 0.2 did, means none). */
  readonly uuid: string | undefined;
  /** The server kind the user declared; undefined lets each client's own kind decide. */
  readonly server: ServerKind | undefined;
  /** Whether waiters queue in arrival order. */
  readonly fair: boolean;
  /** Where background work is handed, so a serverless platform keeps the function alive for it. */
  readonly waitUntil: ((promise: Promise<unknown>) => void) | undefined;
  /** The options every acquisition starts from. */
  readonly hold: HoldOptions;
}

/** How an acquisition issues fencing tokens: not at all, or from a counter with or without a clock floor. */
export type FencingPlan = { readonly clockFloor: boolean | undefined } | undefined;

/** Everything one acquisition uses, after the call's options were merged over the lock's. */
export interface AcquirePlan {
  readonly lease: number;
  /** Tries allowed, counting the first (a wake-up subscription counts as one); may be Infinity. */
  readonly attempts: number;
  readonly backoff: BackoffPolicy;
  readonly uuid: string | undefined;
  /** Undefined without fencing; `clockFloor` undefined lets the server kind decide. */
  readonly fencing: FencingPlan;
  /** Milliseconds between renewals, when auto-extend is on. */
  readonly renewInterval: number | undefined;
  readonly onLost: ((error: LockLostError) => void) | undefined;
  readonly timeout: number | undefined;
  readonly signal: AbortSignal | undefined;
  /** Whether waits may subscribe to the lock's announcements (when the client can subscribe). */
  readonly wakeOnRelease: boolean;
}

function validateRetry(retry: unknown): RetryConfig {
  assertOptionalObject("retry", retry);
  const config = (retry ?? {}) as RetryConfig;
  if (config.attempts !== undefined) assertAttempts(config.attempts);
  if (config.delay !== undefined) assertNonNegativeNumber("retry.delay", config.delay, "milliseconds");
  if (config.maxDelay !== undefined) assertPositiveInteger("retry.maxDelay", config.maxDelay, "milliseconds");
  if (config.backoff !== undefined && config.backoff !== "fixed" && config.backoff !== "exponential") {
    throw new TypeError(
      `Expected \`retry.backoff\` to be "fixed" or "exponential", got ${describeValue(config.backoff)}`,
    );
  }
  const jitter = config.jitter;
  if (jitter !== undefined && (typeof jitter !== "number" || !(jitter >= 0 && jitter <= 1))) {
    const ErrorType = typeof jitter === "number" ? RangeError : TypeError;
    throw new ErrorType(`Expected \`retry.jitter\` to be a number from 0 to 1, got ${describeValue(jitter)}`);
  }
  return config;
}

/** Any number but NaN, as 0.2 took it: at most one try below 1, fractions round up, Infinity allowed. */
function assertAttempts(attempts: unknown): asserts attempts is number {
  if (typeof attempts !== "number") {
    throw new TypeError(`Expected \`retry.attempts\` to be a number, got ${describeValue(attempts)}`);
  }
  if (Number.isNaN(attempts)) {
    throw new RangeError("Expected `retry.attempts` to be a number, got NaN");
  }
}

function validateFencing(fencing: unknown): void {
  if (fencing === undefined || typeof fencing === "boolean") return;
  if (typeof fencing !== "object" || fencing === null || Array.isArray(fencing)) {
    throw new TypeError(`Expected \`fencing\` to be a boolean or an object, got ${describeValue(fencing)}`);
  }
  const clockFloor = (fencing as { clockFloor?: unknown }).clockFloor;
  if (clockFloor !== undefined && typeof clockFloor !== "boolean") {
    throw new TypeError(`Expected \`fencing.clockFloor\` to be a boolean, got ${describeValue(clockFloor)}`);
  }
}

function validateHoldOptions(config: HoldOptions & { retry?: unknown }): HoldOptions {
  if (config.lease !== undefined) assertPositiveInteger("lease", config.lease, "milliseconds");
  validateFencing(config.fencing);
  const autoExtend = config.autoExtend;
  if (autoExtend !== undefined && typeof autoExtend !== "boolean") {
    assertOptionalObject("autoExtend", autoExtend);
    if (autoExtend.interval !== undefined) {
      assertPositiveInteger("autoExtend.interval", autoExtend.interval, "milliseconds");
    }
  }
  if (config.onLost !== undefined) assertFunction("onLost", config.onLost);
  if (config.wakeOnRelease !== undefined && typeof config.wakeOnRelease !== "boolean") {
    throw new TypeError(
      `Expected \`wakeOnRelease\` to be a boolean, got ${describeValue(config.wakeOnRelease)}`,
    );
  }
  return { ...config, retry: validateRetry(config.retry) };
}

/** A token given as `uuid`: a string; empty, null or undefined mean "draw one", as in 0.2 (`if (uuid)`). */
function optionalToken(uuid: unknown): string | undefined {
  if (uuid === undefined || uuid === null || uuid === "") return undefined;
  assertString("uuid", uuid);
  return uuid;
}

/** `fair` is a boolean, and a quorum cannot offer it: one queue per instance gives no single order. */
function validateFair(fair: unknown, instances: number): boolean {
  if (fair === undefined) return false;
  if (typeof fair !== "boolean") {
    throw new TypeError(`Expected \`fair\` to be a boolean, got ${describeValue(fair)}`);
  }
  if (fair && instances > 1) {
    throw new TypeError(
      "`fair` is not supported with a quorum of Redis instances: each instance would keep its own queue, so no single order of arrival exists",
    );
  }
  return fair;
}

/** The most permits a semaphore may have: every acquire sends every permit's key. */
export const MAX_PERMITS = 1_000;

/** Validates a semaphore's `limit`: a positive integer, at most {@link MAX_PERMITS}. */
export function resolvePermitLimit(limit: unknown): number {
  assertPositiveInteger("limit", limit, "permits");
  if (limit > MAX_PERMITS) {
    throw new RangeError(
      `Expected \`limit\` to be at most ${MAX_PERMITS} (permits; every acquire sends every permit's key), got ${limit}`,
    );
  }
  return limit;
}

function validateServer(server: unknown): ServerKind | undefined {
  if (server === undefined || server === "upstash" || server === "redis") return server;
  throw new TypeError(`Expected \`server\` to be "upstash" or "redis", got ${describeValue(server)}`);
}

/** Validates the constructor's options. Throws before any request. */
export function resolveLockSettings(config: LockCreateConfig): LockSettings {
  if (config === undefined) throw new TypeError("Expected `options` to be an object, got undefined");
  assertOptionalObject("options", config);
  assertString("id", config.id);
  const instances = assertRedisOption(config.redis);
  const hold = validateHoldOptions(config);
  if (hold.fencing) assertFencingPossible(instances);
  if (config.waitUntil !== undefined) assertFunction("waitUntil", config.waitUntil);
  const fair = validateFair(config.fair, instances);
  return {
    id: config.id,
    key: prefixedKey(config.prefix, config.id),
    instances,
    uuid: optionalToken(config.uuid),
    server: validateServer(config.server),
    fair,
    waitUntil: config.waitUntil,
    hold,
  };
}

/** Validates `redis`: one client, or an odd number of independent clients. Returns how many. */
function assertRedisOption(redis: unknown): number {
  if (!Array.isArray(redis)) {
    assertEvalClient(redis);
    return 1;
  }
  if (redis.length === 0 || redis.length % 2 === 0) {
    throw new RangeError(
      `Expected \`redis\` to be one client or an odd number of independent clients (so that a majority exists), got an array of ${redis.length}`,
    );
  }
  for (const [index, client] of redis.entries()) {
    try {
      assertEvalClient(client);
    } catch (error) {
      throw new TypeError(
        `Expected \`redis[${index}]\` to be a Redis client with an eval method, got ${describeValue(client)}`,
        { cause: error },
      );
    }
  }
  return redis.length;
}

function assertFencingPossible(instances: number): void {
  if (instances > 1) {
    throw new TypeError(
      "`fencing` is not supported with a quorum of Redis instances: each instance counts tokens on its own, so no single increasing order exists",
    );
  }
}

function resolveBackoff(retry: RetryConfig): BackoffPolicy {
  const delay = retry.delay ?? LOCK_DEFAULTS.delay;
  const maxDelay = retry.maxDelay ?? delay * LOCK_DEFAULTS.maxDelayFactor;
  if (maxDelay < delay) {
    throw new RangeError(
      `Expected \`retry.maxDelay\` to be at least \`retry.delay\` (${delay}), got ${maxDelay}`,
    );
  }
  return {
    delay,
    maxDelay,
    backoff: retry.backoff ?? LOCK_DEFAULTS.backoff,
    jitter: retry.jitter ?? LOCK_DEFAULTS.jitter,
  };
}

/**
 * Tries allowed. A timeout is a budget of time, not of tries: without an explicit count, tries
 * continue until it runs out. 0.2 made `ceil(attempts)` tries; below 1 it made none, where this
 * makes one (a call named acquire should try).
 */
function resolveAttempts(retry: RetryConfig, timeout: number | undefined): number {
  const attempts =
    retry.attempts ?? (timeout === undefined ? LOCK_DEFAULTS.attempts : Number.POSITIVE_INFINITY);
  return Math.max(1, Math.ceil(attempts));
}

function resolveRenewInterval(autoExtend: HoldOptions["autoExtend"], lease: number): number | undefined {
  if (!autoExtend) return undefined;
  const interval =
    (autoExtend === true ? undefined : autoExtend.interval) ??
    Math.max(1, Math.floor(lease / LOCK_DEFAULTS.renewalsPerLease));
  if (interval >= lease) {
    throw new RangeError(
      `Expected \`autoExtend.interval\` to be less than the lease (${lease} ms), got ${interval}: the lease would run out before the renewal`,
    );
  }
  return interval;
}

/** A call's `fencing: true` turns fencing on the way the lock configured it; false or an object replace it. */
function mergeFencing(call: HoldOptions["fencing"], lock: HoldOptions["fencing"]): HoldOptions["fencing"] {
  if (call === true && typeof lock === "object") return lock;
  return call ?? lock;
}

function resolveFencing(fencing: HoldOptions["fencing"]): FencingPlan {
  if (!fencing) return undefined;
  return { clockFloor: fencing === true ? undefined : fencing.clockFloor };
}

function assertAbortSignal(signal: unknown): asserts signal is AbortSignal | undefined {
  const looksLikeSignal =
    typeof signal === "object" &&
    signal !== null &&
    typeof (signal as AbortSignal).aborted === "boolean" &&
    typeof (signal as AbortSignal).addEventListener === "function";
  if (signal !== undefined && !looksLikeSignal) {
    throw new TypeError(`Expected \`signal\` to be an AbortSignal, got ${describeValue(signal)}`);
  }
}

/** Merges one call's options over the lock's, without touching the lock's. Throws before any request. */
export function resolveAcquirePlan(config: LockAcquireConfig | undefined, lock: LockSettings): AcquirePlan {
  assertOptionalObject("config", config);
  const call = validateHoldOptions(config ?? {});
  const uuid = optionalToken(config?.uuid);
  if (config?.timeout !== undefined) assertPositiveInteger("timeout", config.timeout, "milliseconds");
  assertAbortSignal(config?.signal);
  const retry = { ...lock.hold.retry, ...definedFields(call.retry ?? {}) };
  const lease = call.lease ?? lock.hold.lease ?? LOCK_DEFAULTS.lease;
  if (call.fencing) assertFencingPossible(lock.instances);
  return {
    lease,
    attempts: resolveAttempts(retry, config?.timeout),
    backoff: resolveBackoff(retry),
    uuid,
    fencing: resolveFencing(mergeFencing(call.fencing, lock.hold.fencing)),
    renewInterval: resolveRenewInterval(call.autoExtend ?? lock.hold.autoExtend, lease),
    onLost: call.onLost ?? lock.hold.onLost,
    timeout: config?.timeout,
    signal: config?.signal,
    wakeOnRelease: call.wakeOnRelease ?? lock.hold.wakeOnRelease ?? true,
  };
}

function definedFields<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, field]) => field !== undefined)) as Partial<T>;
}

/** Validates `prefix` and returns the Redis key for `id`. */
export function prefixedKey(prefix: unknown, id: string): string {
  if (prefix !== undefined && typeof prefix !== "string") {
    throw new TypeError(`Expected \`prefix\` to be a string, got ${describeValue(prefix)}`);
  }
  return `${prefix ?? ""}${id}`;
}
