import { backoffDelay } from "./backoff";
import { ensureAsyncDisposeSymbol } from "./dispose-symbol";
import {
  type AcquisitionFailureReason,
  type InstanceFailure,
  LockAcquisitionError,
  LockLostError,
  type LockRedisError,
} from "./errors";
import { Hold } from "./hold";
import { type AcquirePlan, type LockSettings, resolveAcquirePlan, resolveLockSettings } from "./options";
import { raceAbort } from "./sleep";
import type { AttemptResult, LockStore } from "./store/lock-store";
import { storeFor } from "./store/store-for";
import { monotonicNow } from "./timers";
import { newToken } from "./token";
import type { LockAcquireConfig, LockCreateConfig, LockStatus } from "./types";
import { assertPositiveInteger } from "./validate";
import { Doorbell } from "./wake/doorbell";
import { ReleaseWatch } from "./wake/release-watch";

ensureAsyncDisposeSymbol();

/** An acquisition's means of being woken early, created only once it has to wait. */
interface WakeUps {
  bell: Doorbell | undefined;
  watch: ReleaseWatch | undefined;
}

/** How one acquisition ended. */
interface AcquireOutcome {
  acquired: boolean;
  attempts: number;
  elapsedMs: number;
  reason?: AcquisitionFailureReason;
  /** Set when the last attempt could not reach Redis. */
  error?: LockRedisError;
  /** With a quorum: instances that failed during the last attempt. */
  instances?: readonly InstanceFailure[] | undefined;
}

/**
 * A distributed lock on one Redis key. The key is the lock's `id`; its value is the holder's
 * token (a UUID unless you pass your own), so 0.2 and this version exclude each other.
 *
 * @example
 * const lock = new Lock({ id: "invoice:42", redis: Redis.fromEnv() });
 * if (await lock.acquire()) {
 *   try { await work(); } finally { await lock.release(); }
 * }
 */
export class Lock implements AsyncDisposable {
  readonly #settings: LockSettings;
  readonly #store: LockStore;
  /** The token this instance holds or was seeded with; kept when a later acquire fails. */
  #token: string | undefined;
  /** The current period of holding, for acquisitions made by this instance. */
  #hold: Hold | undefined;
  #notHeldSignal: AbortSignal | undefined;
  /** The plan of a call without options, resolved once: the common case, on the hot path. */
  #plainPlan: AcquirePlan | undefined;

  /**
   * Checks the options and creates the lock; sends nothing to Redis.
   * @throws {TypeError | RangeError} when an option is missing or out of range.
   */
  constructor(config: LockCreateConfig) {
    this.#settings = resolveLockSettings(config);
    this.#store = storeFor(this.#settings, config.redis);
    this.#token = this.#settings.uuid;
  }

  /** The lock's id; its Redis key is `prefix` + `id`. */
  get id(): string {
    return this.#settings.id;
  }

  /**
   * The fencing token of the current acquisition (with `fencing: true`): larger than every token
   * issued before for this id. Pass it to the resource you protect, which should refuse writes
   * carrying a smaller token than one it has seen. Undefined when not holding or without fencing.
   */
  get fencingToken(): number | undefined {
    return this.#hold?.active ? this.#hold.fencingToken : undefined;
  }

  /**
   * Aborts when the lock is lost, with a {@link LockLostError} as its reason: when Redis reports
   * another token or no key (reason "taken"), or when no renewal succeeded before the local
   * deadline (reason "expired"). Pass it to the work the lock protects. When this instance holds
   * nothing (never acquired, or released), it is a signal that is already aborted (reason
   * "not-held"); a signal taken during a hold is never aborted by `release()`.
   */
  get signal(): AbortSignal {
    if (this.#hold) return this.#hold.signal;
    this.#notHeldSignal ??= AbortSignal.abort(new LockLostError(this.id, "not-held"));
    return this.#notHeldSignal;
  }

  /**
   * Milliseconds until the lock's local deadline: the lease confirmed by the last successful
   * acquire, renewal or extend, counted on a monotonic clock from when that request was sent, minus
   * an allowance for clock drift (1 % + 2 ms). 0 when not holding.
   */
  get remainingMs(): number {
    return this.#hold?.remainingMs ?? 0;
  }

  /**
   * Tries to take the lock, retrying while another owner holds it.
   * @returns true when this instance now holds the lock; false when another owner kept it
   *   through every attempt or until `timeout`. A failed call keeps any lock this instance held.
   * @throws {TypeError | RangeError} on invalid options, before any request.
   * @throws {LockRedisError} when the last attempt could not reach Redis.
   * @throws the `signal`'s reason when the signal aborts.
   */
  async acquire(config?: LockAcquireConfig): Promise<boolean> {
    const outcome = await this.#acquire(config);
    if (outcome.error) throw outcome.error;
    return outcome.acquired;
  }

  /**
   * Like {@link Lock.acquire}, but resolves with the lock itself, which suits `await using`.
   * @throws {LockAcquisitionError} when the lock was not acquired; its `reason` says why, and when
   *   Redis could not be reached its `cause` is the LockRedisError.
   * @throws the `signal`'s reason when the signal aborts.
   */
  async acquireOrThrow(config?: LockAcquireConfig): Promise<this> {
    const outcome = await this.#acquire(config);
    if (outcome.acquired) return this;
    throw new LockAcquisitionError(
      this.id,
      {
        attempts: outcome.attempts,
        elapsedMs: outcome.elapsedMs,
        reason: outcome.reason ?? "held",
        instances: outcome.instances,
      },
      outcome.error ? { cause: outcome.error } : undefined,
    );
  }

  /**
   * Acquires the lock (or throws like {@link Lock.acquireOrThrow}), runs `work` with the lock's
   * signal, and releases in the end. `work`'s own result or error is what this returns or
   * throws: a failed release is ignored (the key then expires with its lease), never reported in
   * its place.
   * @example
   * const total = await lock.runExclusive((signal) => recompute({ signal }), { autoExtend: true });
   */
  async runExclusive<T>(
    work: (signal: AbortSignal) => Promise<T> | T,
    config?: LockAcquireConfig,
  ): Promise<T> {
    await this.acquireOrThrow(config);
    const token = this.#token;
    try {
      return await work(this.signal);
    } finally {
      if (token !== undefined && this.#token === token) await this.#releaseQuietly(token);
    }
  }

  /**
   * Deletes the key if, and only if, it still holds this instance's token. Stops auto-extend.
   * @returns true when this call deleted the lock; false when it was not held by this token
   *   (never acquired, already released, expired, or taken by another owner).
   * @throws {LockRedisError} when Redis could not be reached.
   */
  async release(): Promise<boolean> {
    const token = this.#token;
    if (token === undefined) return false;
    // Stop renewing first, so that no renewal can land after the delete.
    this.#hold?.end();
    this.#hold = undefined;
    const released = await this.#store.release(token);
    if (released && this.#token === token) this.#token = undefined;
    return released;
  }

  /**
   * Adds `amt` milliseconds to the lease that remains, while this instance's token holds the key.
   * @param amt milliseconds to add, a positive integer.
   * @returns true when the lease was extended; false when the lock is not held by this token.
   * @throws {TypeError | RangeError} when `amt` is not a positive integer, before any request.
   * @throws {LockRedisError} when Redis could not be reached.
   */
  async extend(amt: number): Promise<boolean> {
    assertPositiveInteger("amt", amt, "milliseconds");
    const token = this.#token;
    if (token === undefined) return false;
    const sentAt = monotonicNow();
    const { held, pttl } = await this.#store.extend(token, amt);
    this.#observe(token, sentAt, held, pttl);
    return held;
  }

  /**
   * Asks Redis whether this instance's token holds the key right now.
   * @returns "ACQUIRED" when it does, otherwise "FREE" (without a request when there is no token).
   * @throws {LockRedisError} when Redis could not be reached.
   */
  async getStatus(): Promise<LockStatus> {
    const token = this.#token;
    if (token === undefined) return "FREE";
    const sentAt = monotonicNow();
    const { held, pttl } = await this.#store.status(token);
    this.#observe(token, sentAt, held, pttl);
    return held ? "ACQUIRED" : "FREE";
  }

  /**
   * Releases the lock when this instance holds it, for `await using`. Does nothing when the lock
   * was never acquired or was already released, and never throws: if Redis cannot be reached the
   * key expires at the end of its lease. Call `release()` yourself to learn the outcome.
   */
  async [Symbol.asyncDispose](): Promise<void> {
    const token = this.#token;
    if (token !== undefined) await this.#releaseQuietly(token);
  }

  #defaultPlan(): AcquirePlan {
    this.#plainPlan ??= resolveAcquirePlan(undefined, this.#settings);
    return this.#plainPlan;
  }

  /** Keeps the current hold in step with what Redis just said about `token`. */
  #observe(token: string, sentAt: number, held: boolean, pttl: number): void {
    const hold = this.#hold;
    if (!hold?.active || hold.token !== token) return;
    if (held) hold.confirm(sentAt, pttl);
    else hold.lose("taken");
  }

  async #acquire(config: LockAcquireConfig | undefined): Promise<AcquireOutcome> {
    const plan = config === undefined ? this.#defaultPlan() : resolveAcquirePlan(config, this.#settings);
    if (plan.signal?.aborted) throw plan.signal.reason;
    const token = plan.uuid ?? newToken();
    const wakeUps: WakeUps = { bell: undefined, watch: undefined };
    try {
      return await this.#tryUntilDone(plan, token, wakeUps);
    } finally {
      wakeUps.watch?.close();
    }
  }

  async #tryUntilDone(plan: AcquirePlan, token: string, wakeUps: WakeUps): Promise<AcquireOutcome> {
    const started = monotonicNow();
    const budgetEnd = plan.timeout === undefined ? Number.POSITIVE_INFINITY : started + plan.timeout;
    let attempt = 0;
    let fastestRoundTrip = Number.POSITIVE_INFINITY;
    for (let countsAsAttempt = true; ; ) {
      if (countsAsAttempt) attempt += 1;
      wakeUps.bell?.reset();
      const sentAt = monotonicNow();
      const result = await this.#attemptOnce(token, plan);
      if (result.kind === "acquired") {
        this.#startHold(token, plan, sentAt, result.fencingToken);
        return { acquired: true, attempts: attempt, elapsedMs: monotonicNow() - started };
      }
      const now = monotonicNow();
      // Woken waiters spread their retries over a few round trips, so the first one's success
      // (announced) reaches the others before they send theirs.
      fastestRoundTrip = Math.min(fastestRoundTrip, now - sentAt);
      wakeUps.bell ??= new Doorbell();
      const bell = wakeUps.bell;
      bell.spreadMs = Math.min(4 * fastestRoundTrip, plan.backoff.delay);
      if (attempt >= plan.attempts || now >= budgetEnd) {
        return this.#giveUp(token, result, attempt, now - started, now >= budgetEnd ? "timeout" : "held");
      }
      // From the first wait on, a release announcement ends any wait early (polling stays the fallback).
      if (plan.wakeOnRelease && result.kind === "held") wakeUps.watch ??= new ReleaseWatch(this.#store, bell);
      // Never wait past the moment the holder's lease ends, nor past the caller's budget.
      let wait = backoffDelay(attempt, plan.backoff);
      if (result.kind === "held" && result.pttl >= 0) wait = Math.min(wait, result.pttl);
      try {
        await bell.wait(Math.max(0, Math.min(wait, budgetEnd - now)), plan.signal);
      } catch (reason) {
        if (result.kind === "error") this.#releaseInBackground(token);
        throw reason;
      }
      // The try right after the subscription became active catches a release announced before it.
      countsAsAttempt = !wakeUps.watch?.takeActivation();
    }
  }

  /** One acquire round, abandoned (and cleaned up after) if the caller's signal aborts. */
  #attemptOnce(token: string, plan: AcquirePlan): Promise<AttemptResult> {
    return raceAbort(this.#store.attempt(token, plan.lease, plan.fencing), plan.signal, (abandoned) => {
      // Attempts only reject on a bug, which the caller already sees through the abort; a
      // result that took (or may have taken) the lock is released.
      abandoned.then(
        (late) => late.kind !== "held" && this.#releaseInBackground(token),
        () => this.#releaseInBackground(token),
      );
    });
  }

  async #giveUp(
    token: string,
    last: AttemptResult,
    attempts: number,
    elapsedMs: number,
    reason: AcquisitionFailureReason,
  ): Promise<AcquireOutcome> {
    if (last.kind === "held")
      return { acquired: false, attempts, elapsedMs, reason, instances: last.failures };
    // The last request may have run with its reply lost: do not leave the key held by a token
    // nobody remembers.
    if (token !== this.#token) await this.#releaseQuietly(token);
    const { error } = last as Extract<AttemptResult, { kind: "error" }>;
    return { acquired: false, attempts, elapsedMs, reason: "redis-error", error, instances: error.instances };
  }

  #startHold(token: string, plan: AcquirePlan, sentAt: number, fencingToken: number | undefined): void {
    const previous = this.#hold;
    // A different token could only take a free key, so the previous hold is gone in Redis.
    if (previous?.active && previous.token !== token) previous.lose("taken");
    else previous?.end();
    this.#token = token;
    const interval = plan.renewInterval;
    this.#hold = new Hold({
      lockId: this.id,
      token,
      lease: plan.lease,
      fencingToken,
      sentAt,
      onLost: plan.onLost,
      renewal:
        interval === undefined ? undefined : { interval, renew: () => this.#store.renew(token, plan.lease) },
    });
  }

  /** Releases `token` if this instance still holds it, ignoring failures (the lease bounds them). */
  async #releaseQuietly(token: string): Promise<void> {
    if (this.#hold?.token === token) {
      this.#hold.end();
      this.#hold = undefined;
    }
    try {
      if (await this.#store.release(token)) {
        if (this.#token === token) this.#token = undefined;
      }
    } catch {
      // Best effort: the lease bounds how long such a key can stay.
    }
  }

  /** Cleans up after an abandoned attempt, without anyone awaiting it. */
  #releaseInBackground(token: string): void {
    if (token !== this.#token) void this.#releaseQuietly(token);
  }
}
