import { assertEvalClient } from "./client/script-runner";
import type { LockAcquireConfig, LockCreateConfig, RetryConfig } from "./types";
import {
  assertNonEmptyString,
  assertNonNegativeInteger,
  assertOptionalObject,
  assertPositiveInteger,
} from "./validate";

/** Defaults of every lock option, as 0.2 documents them. */
export const LOCK_DEFAULTS = Object.freeze({
  lease: 10_000,
  retry: Object.freeze({ attempts: 3, delay: 100 }),
});

/** A retry policy with every field set. */
export interface ResolvedRetry {
  readonly attempts: number;
  readonly delay: number;
}

/** What one acquisition uses, after per-call overrides were merged over the lock's options. */
export interface AcquirePlan {
  readonly lease: number;
  readonly retry: ResolvedRetry;
  readonly uuid: string | undefined;
}

function resolveRetry(name: string, retry: RetryConfig | undefined, base: ResolvedRetry): ResolvedRetry {
  assertOptionalObject(name, retry);
  const attempts = retry?.attempts ?? base.attempts;
  const delay = retry?.delay ?? base.delay;
  assertNonNegativeInteger(`${name}.attempts`, attempts);
  assertPositiveInteger(`${name}.delay`, delay, "milliseconds");
  return { attempts, delay };
}

/** Validates the constructor's options and fills in defaults. Throws before any request. */
export function resolveLockOptions(config: LockCreateConfig): {
  id: string;
  lease: number;
  retry: ResolvedRetry;
  uuid: string | undefined;
} {
  assertOptionalObject("options", config);
  if (config === undefined) throw new TypeError("Expected `options` to be an object, got undefined");
  assertNonEmptyString("id", config.id);
  assertEvalClient(config.redis);
  const lease = config.lease ?? LOCK_DEFAULTS.lease;
  assertPositiveInteger("lease", lease, "milliseconds");
  if (config.uuid !== undefined) assertNonEmptyString("uuid", config.uuid);
  return {
    id: config.id,
    lease,
    retry: resolveRetry("retry", config.retry, LOCK_DEFAULTS.retry),
    uuid: config.uuid,
  };
}

/** Merges one call's overrides over the lock's options, without touching the lock's options. */
export function resolveAcquirePlan(
  config: LockAcquireConfig | undefined,
  base: { lease: number; retry: ResolvedRetry },
): AcquirePlan {
  assertOptionalObject("config", config);
  const lease = config?.lease ?? base.lease;
  assertPositiveInteger("lease", lease, "milliseconds");
  const uuid = config?.uuid;
  if (uuid !== undefined) assertNonEmptyString("uuid", uuid);
  return { lease, retry: resolveRetry("retry", config?.retry, base.retry), uuid };
}
