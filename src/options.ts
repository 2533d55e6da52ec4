import type { Background } from "./background";
import type { BackoffPolicy } from "./backoff";
import { clockDriftAllowance } from "./clock";
import type { LockLostError } from "./errors";
import { assertRedisClient, type RedisClient } from "./redis/client";
import type { ServerKind } from "./redis/server";
import type { FencingPlan, LockStore, StoreMaker } from "./store";
import type { HoldOptions, LockAcquireConfig, LockCreateConfig } from "./types";
import { check, describeValue, type Rule } from "./validate";

/** The defaults of 0.2: a 10 s lease, 3 tries 100 ms apart. */
const DEFAULT_LEASE_MS = 10_000;

/** The shortest lease, in ms, that leaves a try time to be answered after the clock-drift allowance. */
const MIN_LEASE_MS = 3;

/**
 * How long, in ms, a fair waiter's place in line outlives its longest wait: a margin for a slow request
 * and differing clocks (deadlines are on each waiter's own). A gone waiter blocks the line that long at most.
 */
export const QUEUE_GRACE_MS = 2_000;

/** What marks a quorum of independent Redis instances, as `quorum()` makes it (see `quorum.ts`). */
export const QUORUM: unique symbol = Symbol.for("@upstash/lock.quorum");

/** A quorum of independent Redis instances, made by `quorum([...clients])`. */
export interface QuorumSpec {
  readonly [QUORUM]: true;
  readonly clients: readonly RedisClient[];
  /** @internal Builds the quorum's store from one store per member. */
  build(settings: LockSettings, make: StoreMaker, background: Background): LockStore;
}

export function isQuorum(redis: unknown): redis is QuorumSpec {
  return (redis as Partial<QuorumSpec> | null)?.[QUORUM] === true;
}

/** The options a lock keeps, validated. */
export interface LockSettings {
  readonly id: string;
  /** The client, or the quorum, as given. */
  readonly redis: RedisClient | QuorumSpec;
  /** The Redis key: `prefix` + `id`. */
  readonly key: string;
  /** The seeded token, if any (an empty string, as in 0.2, means none). */
  readonly uuid: string | undefined;
  /** The server kind the user declared; undefined lets each client's own kind decide. */
  readonly server: ServerKind | undefined;
  readonly waitUntil: ((promise: Promise<unknown>) => void) | undefined;
  /** Whether the lock is held on a quorum, which cannot issue fencing tokens. */
  readonly quorum: boolean;
  /** The options every acquisition starts from. */
  readonly hold: HoldOptions;
  /** The plan of a call without options, resolved once: the common case. */
  readonly plain: AcquirePlan;
}

/** Everything one acquisition uses, after the call's options were merged over the lock's. */
export interface AcquirePlan {
  readonly lease: number;
  /** Tries allowed, counting the first (a subscription counts as one); may be Infinity. */
  readonly attempts: number;
  readonly backoff: BackoffPolicy;
  readonly uuid: string | undefined;
  readonly fencing: FencingPlan;
  /** Milliseconds between renewals, when auto-extend is on. */
  readonly renewInterval: number | undefined;
  readonly onLost: ((error: LockLostError) => void) | undefined;
  readonly timeout: number | undefined;
  readonly signal: AbortSignal | undefined;
  /** Whether waits may subscribe to the lock's announcements (when the client has wake-ups). */
  readonly wakeOnRelease: boolean;
}

// Checked in this order; a nested option is read once its parent passed as an object (or a boolean switch).
const HOLD_RULES: readonly (readonly [string, Rule])[] = [
  ["lease", "ms"],
  ["fencing", "switch"],
  ["autoExtend", "switch"],
  ["fencing.clockFloor", "boolean"],
  ["autoExtend.interval", "ms"],
  ["onLost", "function"],
  ["wakeOnRelease", "boolean"],
  ["retry", "object"],
  ["retry.attempts", "count"],
  ["retry.delay", "delay"],
  ["retry.maxDelay", "ms"],
  ["retry.backoff", ["fixed", "exponential"]],
  ["retry.jitter", "fraction"],
];

/**
 * Checks the hold options and returns a copy, each read once: the caller's objects may change (or a getter
 * answer differently) after the check, and what was checked is what is used.
 */
function checkHold(config: HoldOptions): HoldOptions {
  const given: Record<string, unknown> = {}; // the caller's values, a nested object once read
  const copy: Record<string, unknown> = {};
  for (const [name, rule] of HOLD_RULES) {
    const [parent, child] = name.split(".") as [string, string | undefined];
    const value =
      child === undefined ? config[parent as keyof HoldOptions] : (given[parent] as never)?.[child];
    check(name, value, rule);
    if (child === undefined) {
      given[parent] = value;
      copy[parent] = value !== null && typeof value === "object" ? {} : value;
    } else if (copy[parent] !== null && typeof copy[parent] === "object") {
      (copy[parent] as Record<string, unknown>)[child] = value;
    }
  }
  return copy as HoldOptions;
}

/** A token given as `uuid`: a string; empty, null or undefined mean "draw one", as in 0.2 (`if (uuid)`). */
function optionalToken(uuid: unknown): string | undefined {
  if (uuid === null || uuid === "") return undefined;
  check("uuid", uuid, "text");
  return uuid as string | undefined;
}

export function prefixedKey(prefix: unknown, id: string): string {
  check("prefix", prefix, "text");
  return `${prefix ?? ""}${id}`;
}

/**
 * Validates the options, clashes included (`maxDelay` < `delay`, interval ≥ lease), before any request.
 * @param fair whether waiters queue in arrival order, which a quorum cannot offer.
 */
export function resolveLockSettings(config: LockCreateConfig, fair = false): LockSettings {
  check("options", config, "object", true);
  const { id, redis, prefix, uuid, server, waitUntil } = config; // each read once, then checked
  check("id", id, "text", true);
  const quorum = isQuorum(redis);
  if (Array.isArray(redis)) {
    throw new TypeError("Expected `redis` to be one client; for a quorum, pass `quorum([...clients])`");
  }
  if (!quorum) assertRedisClient("redis", redis);
  if (fair && quorum)
    throw new TypeError("A fair lock or semaphore cannot run on a quorum: no single line exists");
  check("waitUntil", waitUntil, "function");
  check("server", server, ["upstash", "redis"]);
  const settings = {
    id,
    redis,
    key: prefixedKey(prefix, id),
    uuid: optionalToken(uuid),
    server,
    waitUntil,
    quorum,
    hold: checkHold(config),
  } as LockSettings;
  return { ...settings, plain: resolveAcquirePlan(undefined, settings) };
}

/** Merges one call's options over the lock's, without touching the lock's. Throws before any request. */
export function resolveAcquirePlan(config: LockAcquireConfig | undefined, lock: LockSettings): AcquirePlan {
  if (config === undefined && lock.plain) return lock.plain;
  check("config", config, "object");
  const call = checkHold(config ?? {});
  const { hold } = lock;
  const timeout = config?.timeout ?? undefined;
  const signal = config?.signal ?? undefined;
  check("timeout", timeout, "ms");
  // What the wait uses of it: a look-alike missing one would fail from a callback, the call never settling.
  const usable = (given: Partial<AbortSignal> | null) =>
    typeof given?.aborted === "boolean" &&
    typeof given.addEventListener === "function" &&
    typeof given.removeEventListener === "function";
  if (signal !== undefined && !usable(signal)) {
    throw new TypeError(`Expected \`signal\` to be an AbortSignal, got ${describeValue(signal)}`);
  }
  const retry = { ...hold.retry };
  for (const [name, value] of Object.entries(call.retry ?? {}))
    if (value != null) (retry as Record<string, unknown>)[name] = value;
  const lease = call.lease ?? hold.lease ?? DEFAULT_LEASE_MS;
  // `true` for one call turns fencing on with the lock's own settings.
  const fencing = call.fencing === true ? hold.fencing || true : (call.fencing ?? hold.fencing);
  if (fencing && lock.quorum) throw new TypeError("`fencing` needs one counter, which a quorum has not");
  const delay = retry.delay ?? 100;
  const maxDelay = retry.maxDelay ?? Math.max(1, delay * 10);
  if (maxDelay < delay) {
    throw new RangeError(
      `Expected \`retry.maxDelay\` to be at least \`retry.delay\` (${delay}), got ${maxDelay}`,
    );
  }
  const autoExtend = call.autoExtend ?? hold.autoExtend;
  const chosen = autoExtend ? (autoExtend as { interval?: number }).interval : undefined;
  const interval = autoExtend ? (chosen ?? Math.max(1, Math.floor(lease / 3))) : undefined;
  if (interval !== undefined && interval >= lease) {
    throw new RangeError(
      chosen === undefined // a third of the lease, at least 1 ms: only a 1 ms lease leaves none
        ? `Expected \`lease\` to be at least 2 ms with \`autoExtend\` (renewed a third of the way), got ${lease}`
        : `Expected \`autoExtend.interval\` to be less than the lease (${lease} ms), got ${interval}`,
    );
  }
  // A try is given the lease less the clock-drift allowance to be answered in: a shorter lease leaves none.
  if (lease <= clockDriftAllowance(lease)) {
    throw new RangeError(
      `Expected \`lease\` to be at least ${MIN_LEASE_MS} ms (a try needs time to be answered within it), got ${lease}`,
    );
  }
  // A timeout budgets time, not tries: with no count set, tries go on until it runs out. At least one try.
  const attempts = retry.attempts ?? (timeout === undefined ? 3 : Number.POSITIVE_INFINITY);
  return {
    lease,
    attempts: Math.max(1, Math.ceil(attempts)),
    backoff: { delay, maxDelay, backoff: retry.backoff ?? "fixed", jitter: retry.jitter ?? 0 },
    uuid: optionalToken(config?.uuid),
    fencing: fencing ? { clockFloor: (fencing as { clockFloor?: boolean }).clockFloor } : undefined,
    renewInterval: interval,
    onLost: call.onLost ?? hold.onLost ?? undefined,
    timeout,
    signal,
    wakeOnRelease: call.wakeOnRelease ?? hold.wakeOnRelease ?? true,
  };
}
