/** Machine-readable kinds of {@link LockError}. */
export type LockErrorCode = "LOCK_NOT_ACQUIRED" | "LOCK_REDIS_ERROR" | "LOCK_LOST" | "LOCK_INSTANCE_TIMEOUT";

const LOCK_ERROR_CODES: ReadonlySet<string> = new Set<LockErrorCode>([
  "LOCK_NOT_ACQUIRED",
  "LOCK_REDIS_ERROR",
  "LOCK_LOST",
  "LOCK_INSTANCE_TIMEOUT",
]);

type CaptureStackTrace = (target: object, constructorOpt?: unknown) => void;

/**
 * Base class of every error the library throws on purpose (programming mistakes throw plain
 * `TypeError`/`RangeError` instead). Use `error.code` or {@link isLockError} rather than
 * `instanceof` when two copies of the package (ESM and CJS) may be loaded at once.
 */
export class LockError extends Error {
  override name = "LockError";
  /** What went wrong, as a stable string. */
  readonly code: LockErrorCode;
  /** The lock's id. */
  readonly lockId: string;

  constructor(code: LockErrorCode, lockId: string, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.code = code;
    this.lockId = lockId;
    // Point the stack at the caller's line rather than at the library's internals (V8 only).
    (Error as { captureStackTrace?: CaptureStackTrace }).captureStackTrace?.(this, new.target);
  }
}

/** What stopped an acquisition. */
export type AcquisitionFailureReason =
  /** Another holder kept the lock through every attempt. */
  | "held"
  /** The `timeout` budget ran out while another holder kept the lock. */
  | "timeout"
  /** The last attempt failed to reach Redis; `cause` holds a {@link LockRedisError}. */
  | "redis-error";

/**
 * Thrown by `acquireOrThrow()` when the lock could not be acquired. Carries no token.
 */
export class LockAcquisitionError extends LockError {
  override name = "LockAcquisitionError";
  /** How many times the lock was tried. */
  readonly attempts: number;
  /** Time spent trying, in milliseconds (monotonic clock). */
  readonly elapsedMs: number;
  /** Why the acquisition failed. */
  readonly reason: AcquisitionFailureReason;
  /** With a quorum of instances: those that failed during the last attempt, and why. */
  readonly instances: readonly InstanceFailure[] | undefined;

  constructor(
    lockId: string,
    details: {
      attempts: number;
      elapsedMs: number;
      reason: AcquisitionFailureReason;
      instances?: readonly InstanceFailure[] | undefined;
    },
    options?: { cause?: unknown },
  ) {
    const tries = details.attempts === 1 ? "1 attempt" : `${details.attempts} attempts`;
    const why = {
      held: "it is held by another owner",
      timeout: "the timeout ran out while another owner held it",
      "redis-error": "Redis could not be reached",
    }[details.reason];
    super(
      "LOCK_NOT_ACQUIRED",
      lockId,
      `Could not acquire lock ${JSON.stringify(lockId)} after ${tries} in ${Math.round(details.elapsedMs)} ms: ${why}`,
      options,
    );
    this.attempts = details.attempts;
    this.elapsedMs = details.elapsedMs;
    this.reason = details.reason;
    this.instances = details.instances;
  }
}

/** How a held lock was lost. */
export type LockLossReason =
  /** Redis answered that the key no longer holds this token: it expired, or was deleted or overwritten. */
  | "taken"
  /** No renewal succeeded before the local deadline, so the lock can no longer be known held. */
  | "expired"
  /** Only on `lock.signal` when this instance holds nothing: never acquired, or released. */
  | "not-held";

/**
 * The reason `lock.signal` aborts with, and what `onLost` receives, when a held lock is lost.
 * Losing a lock is an expected outcome of leases: it is reported, never thrown from a timer.
 */
export class LockLostError extends LockError {
  override name = "LockLostError";
  /** Whether Redis confirmed the loss ("taken") or the local deadline passed ("expired"). */
  readonly reason: LockLossReason;

  constructor(lockId: string, reason: LockLossReason) {
    const why = {
      taken:
        "was lost: Redis no longer holds this owner's token (the lease ran out, or the key was deleted or overwritten)",
      expired: "was lost: no renewal succeeded before the lease's local deadline",
      "not-held": "is not held by this instance",
    }[reason];
    super("LOCK_LOST", lockId, `Lock ${JSON.stringify(lockId)} ${why}`);
    this.reason = reason;
  }
}

/** One instance of a quorum that failed to answer, and why. */
export interface InstanceFailure {
  /** Position of the instance in the `redis` array. */
  readonly instance: number;
  /** Why that instance's request failed: a {@link LockRedisError} or an {@link InstanceTimeoutError}. */
  readonly error: LockRedisError | InstanceTimeoutError;
}

/**
 * One instance of a quorum gave no answer within its time limit, which is kept well below the
 * lease so that a frozen or unreachable member cannot stall the others. Found in
 * `instances[].error`; the request may still complete on that instance later.
 */
export class InstanceTimeoutError extends LockError {
  override name = "InstanceTimeoutError";
  /** The operation that waited. */
  readonly operation: LockOperation;
  /** How long it waited, in milliseconds. */
  readonly timeoutMs: number;

  constructor(lockId: string, operation: LockOperation, timeoutMs: number) {
    super("LOCK_INSTANCE_TIMEOUT", lockId, `no reply within ${timeoutMs} ms`);
    this.operation = operation;
    this.timeoutMs = timeoutMs;
  }
}

/** The lock operation that was running when a Redis request failed. */
export type LockOperation = "acquire" | "release" | "extend" | "renew" | "status" | "debounce";

/**
 * A Redis request failed: the network, the server, or an error reply (for example WRONGTYPE when
 * the key holds something that is not a lock). The client's original error is in `cause`.
 */
export class LockRedisError extends LockError {
  override name = "LockRedisError";
  /** The operation that sent the failing request. */
  readonly operation: LockOperation;
  /** With a quorum of instances: which instances failed, and why (only the failing request's). */
  readonly instances: readonly InstanceFailure[] | undefined;

  constructor(lockId: string, operation: LockOperation, cause: unknown, secret?: string) {
    super(
      "LOCK_REDIS_ERROR",
      lockId,
      `Redis request for ${operation} of lock ${JSON.stringify(lockId)} failed: ${redactedMessage(cause, secret)}`,
      { cause },
    );
    this.operation = operation;
    this.instances = undefined;
  }

  /**
   * A quorum operation that could not reach a decision because too many instances failed.
   * The instances' own errors are already free of the token.
   */
  static fromInstances(
    lockId: string,
    operation: LockOperation,
    failures: readonly InstanceFailure[],
    total: number,
  ): LockRedisError {
    const details = failures.map(({ instance, error }) => `#${instance}: ${instanceText(error)}`).join("; ");
    const summary = `${failures.length} of ${total} instances failed (${details})`;
    const error = new LockRedisError(
      lockId,
      operation,
      new AggregateError(
        failures.map((f) => f.error),
        summary,
      ),
    );
    (error as { instances: readonly InstanceFailure[] }).instances = failures;
    return error;
  }
}

// An instance's own LockRedisError repeats the lock and operation: keep only what went wrong.
function instanceText(error: unknown): string {
  return errorText(error).replace(/^Redis request for \w+ of lock .*? failed: /, "");
}

function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

// Client errors quote the whole command ("command was: [...]"), which includes the token.
function redactedMessage(cause: unknown, secret: string | undefined): string {
  const text = errorText(cause);
  return secret ? text.split(secret).join("<token>") : text;
}

/**
 * True for any error this library throws on purpose, from any copy of the package (an ESM and a
 * CJS copy do not share classes): an instance of {@link LockError}, or an Error carrying one of
 * the library's own codes and a lock id.
 */
export function isLockError(error: unknown): error is LockError {
  if (error instanceof LockError) return true;
  if (!(error instanceof Error)) return false;
  const { code, lockId } = error as { code?: unknown; lockId?: unknown };
  return typeof code === "string" && LOCK_ERROR_CODES.has(code) && typeof lockId === "string";
}
