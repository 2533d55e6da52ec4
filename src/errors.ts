import { isClientTimeout, isErrorReply, redacted, summarize } from "./redis/failure";
import { UnreadableReplyError } from "./redis/reply";

const CODES = ["LOCK_NOT_ACQUIRED", "LOCK_REDIS_ERROR", "LOCK_LOST", "LOCK_INSTANCE_TIMEOUT"] as const;

/** Machine-readable kinds of {@link LockError}. */
export type LockErrorCode = (typeof CODES)[number];

type CaptureStackTrace = (target: object, constructorOpt?: unknown) => void;

/**
 * Base of every error thrown on purpose (misuse throws `TypeError`/`RangeError`). Check `error.code` or
 * {@link isLockError}, not `instanceof`: ESM and CJS copies may both load. No message or cause has a token.
 */
export class LockError extends Error {
  override name = "LockError";
  /** What went wrong, as a stable string. */
  declare readonly code: LockErrorCode;
  declare readonly lockId: string;

  constructor(code: LockErrorCode, lockId: string, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.code = code;
    this.lockId = lockId;
    // Point the stack at the caller's line, not the library's internals (V8 only).
    (Error as { captureStackTrace?: CaptureStackTrace }).captureStackTrace?.(this, new.target);
  }
}

/** What stopped an acquisition. */
export type AcquisitionFailureReason =
  /** Another holder kept the lock through every attempt (a try found it held). */
  | "held"
  /**
   * The `timeout` ran out while another holder kept the lock, as the last answered try found; a try the
   * timeout then cut off unanswered is the `cause`.
   */
  | "timeout"
  /** The last try got no answer, or an error: `cause` is the {@link LockRedisError}. */
  | "redis-error";

/** Thrown by `acquireOrThrow()` when the lock could not be acquired. */
export class LockAcquisitionError extends LockError {
  override name = "LockAcquisitionError";
  /** How many times the lock was tried; a wait for another caller of this instance counts (the message splits them). */
  declare readonly attempts: number;
  /** Time spent trying, in milliseconds (monotonic clock). */
  declare readonly elapsedMs: number;
  declare readonly reason: AcquisitionFailureReason;
  /** With a quorum of instances: those that failed during the last attempt, and why. */
  declare readonly instances: readonly InstanceFailure[] | undefined;

  constructor(
    lockId: string,
    details: {
      attempts: number;
      elapsedMs: number;
      reason: AcquisitionFailureReason;
      instances?: readonly InstanceFailure[] | undefined;
      error?: LockRedisError | undefined;
      /** The holder was another caller of this instance, waited for here: nothing was asked of Redis. */
      here?: boolean | undefined;
      /** With `here`: `error` is the silence of that caller's try, not of one this call sent after it. */
      turnSilent?: boolean | undefined;
      /** The last wait was here, nothing asked of Redis: without `here`, for a request of the same uuid. */
      local?: boolean | undefined;
      /** This process stalled while its last try was out (read too late, or maybe never sent): it was undone. */
      stalled?: boolean | undefined;
      /** Of `attempts`, how many were waits here (for another caller of this instance): nothing was sent. */
      waitedHere?: number | undefined;
    },
  ) {
    const tries = details.attempts === 1 ? "1 attempt" : `${details.attempts} attempts`;
    // A wait here counts as an attempt (0.2's budget): say so, or the count reads as tries Redis refused.
    const waits = details.waitedHere ?? 0;
    const sent = details.attempts - waits;
    const split =
      waits === 0
        ? ""
        : sent === 0
          ? ` (${waits === 1 ? "a wait" : "each a wait"} here, nothing sent to Redis)`
          : ` (${sent} sent to Redis, ${waits} ${waits === 1 ? "wait" : "waits"} here)`;
    const holder = details.here
      ? details.error && details.turnSilent
        ? `another caller of this instance was acquiring it, and ${details.error.reason}`
        : `another caller of this instance held it or was acquiring it${details.error ? `; then ${details.error.reason}` : ""}`
      : details.local
        ? "a release, renewal or extend of this uuid here was still unanswered (it may yet reach Redis)"
        : details.stalled
          ? "this process stalled with its try out"
          : "";
    const why =
      details.reason === "held"
        ? holder || "it is held by another owner"
        : details.reason === "timeout"
          ? `the timeout ran out while ${holder || `another owner held it${details.error ? `, as the last answer said; then ${details.error.reason}` : ""}`}`
          : (details.error?.reason ?? "Redis did not answer");
    super(
      "LOCK_NOT_ACQUIRED",
      lockId,
      `Could not acquire lock ${JSON.stringify(lockId)} after ${tries}${split} in ${Math.round(details.elapsedMs)} ms: ${why}`,
      details.error ? { cause: details.error } : undefined,
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
  /** The lease's local deadline passed without a successful renewal: the lock is no longer known held. */
  | "expired"
  /** Only on a signal read where nothing is held: never acquired, or released. */
  | "not-held";

/** What a lost lock's `signal` aborts with and `onLost` gets: expected, so never thrown from a timer. */
export class LockLostError extends LockError {
  override name = "LockLostError";
  /** Whether Redis confirmed the loss ("taken") or the local deadline passed ("expired"). */
  declare readonly reason: LockLossReason;

  /** @param renewing whether auto-extend was renewing the lease, which the message then mentions. */
  constructor(lockId: string, reason: LockLossReason, renewing = false) {
    const why = {
      taken:
        "was lost: Redis holds another token, or none (the lease ran out, or the key was deleted or overwritten)",
      expired: renewing
        ? "was lost: no renewal succeeded before the lease ran out"
        : "was lost: its lease ran out",
      "not-held": "is not held here",
    }[reason];
    super("LOCK_LOST", lockId, `Lock ${JSON.stringify(lockId)} ${why}`);
    this.reason = reason;
  }
}

/** One instance of a quorum that failed to answer, and why. */
export interface InstanceFailure {
  /** Position of the instance in the quorum's list of clients. */
  readonly instance: number;
  /** Why that instance's request failed: a {@link LockRedisError} or an {@link InstanceTimeoutError}. */
  readonly error: LockRedisError | InstanceTimeoutError;
}

/**
 * A request got no reply in time: as long as it could still be useful (a lease, what was left of a
 * timeout), or a third of the lease for a quorum member. If it completes in Redis later, it is undone.
 */
export class InstanceTimeoutError extends LockError {
  override name = "InstanceTimeoutError";
  /** The operation that waited. */
  declare readonly operation: LockOperation;
  /** How long it waited, in milliseconds. */
  declare readonly timeoutMs: number;

  constructor(lockId: string, operation: LockOperation, timeoutMs: number) {
    // At least 1 ms: a timer waits no less, and "within 0 ms" reads as no wait at all.
    super("LOCK_INSTANCE_TIMEOUT", lockId, `no reply within ${Math.max(1, Math.round(timeoutMs))} ms`);
    this.operation = operation;
    this.timeoutMs = timeoutMs;
  }
}

/** The lock operation that was running when a Redis request failed. */
export type LockOperation = "acquire" | "release" | "extend" | "renew" | "status" | "debounce";

/**
 * A Redis request failed: no reply in time, the network, the server, or an error reply (a wrong token,
 * WRONGTYPE when the key is not a lock's). `cause` is the {@link InstanceTimeoutError}, or a copy of the
 * client's error without the token and the command it quotes.
 */
export class LockRedisError extends LockError {
  override name = "LockRedisError";
  /** The operation that sent the failing request. */
  declare readonly operation: LockOperation;
  /** Whether Redis refused the request in a way no retry can heal (authentication, a wrong key type, ...). */
  declare readonly refused: boolean;
  /**
   * What happened, in a few words: "Redis did not answer ...", "Redis refused ...", "Redis could not be
   * reached: ...", "Redis answered with an error: ...", "Redis answered in a form the lock cannot read ...";
   * with a quorum, "2 of 3 instances failed: #0: ...; #1: ...". Tell them apart by `refused` and
   * `instances`, not by the text.
   */
  declare readonly reason: string;
  /** With a quorum of instances: which instances failed, and why. */
  declare readonly instances: readonly InstanceFailure[] | undefined;

  /**
   * @param refused see {@link LockRedisError.refused}.
   * @param secret the token, taken out of everything the error carries.
   */
  constructor(
    lockId: string,
    operation: LockOperation,
    cause: unknown,
    options: { refused?: boolean; secret?: string | undefined; instances?: readonly InstanceFailure[] } = {},
  ) {
    const timedOut = cause instanceof InstanceTimeoutError;
    const said = summarize(cause, options.secret) || nameOf(cause);
    // A quorum's failure says its members' reasons itself ("2 of 3 instances failed: #0: ..."); a client's
    // own AggregateError (Node's connect to several addresses) is a client error like any other.
    const combined = options.instances !== undefined && cause instanceof AggregateError;
    const reason = combined
      ? cause.message
      : timedOut
        ? `Redis did not answer (${said})`
        : options.refused
          ? `Redis refused the request: ${said}`
          : isClientTimeout(cause)
            ? `Redis did not answer (the client's timeout: ${said})`
            : cause instanceof UnreadableReplyError
              ? `Redis answered in a form the lock cannot read (check the client's reply settings): ${said}`
              : isErrorReply(cause)
                ? `Redis answered with an error: ${said}`
                : `Redis could not be reached: ${said}`;
    super(
      "LOCK_REDIS_ERROR",
      lockId,
      `Redis request for ${operation} of lock ${JSON.stringify(lockId)} failed: ${reason}`,
      {
        cause: timedOut || combined ? cause : redacted(cause, options.secret),
      },
    );
    this.operation = operation;
    this.refused = options.refused ?? false;
    this.reason = reason;
    this.instances = options.instances;
  }
}

/** What names an error that has no message: its class and code ("AggregateError (ECONNREFUSED)"). */
function nameOf(error: unknown): string {
  const { code } = (error ?? {}) as { code?: unknown };
  const made = (error as { constructor?: { name?: unknown } } | null)?.constructor?.name;
  const name = typeof made === "string" && made !== "Object" ? made : "an error";
  return `${name}${typeof code === "string" ? ` (${code})` : ""}`;
}

/**
 * True for any error this library throws on purpose, from any copy of the package (ESM and CJS copies
 * share no classes): a {@link LockError}, or an Error with one of the library's codes and a lock id.
 */
export function isLockError(error: unknown): error is LockError {
  if (error instanceof LockError) return true;
  const { code, lockId } = (error ?? {}) as { code?: unknown; lockId?: unknown };
  return error instanceof Error && (CODES as readonly unknown[]).includes(code) && typeof lockId === "string";
}
