import { type AcquireOutcome, Acquisition } from "./acquisition";
import { monotonicNow } from "./clock";
import { ensureAsyncDisposeSymbol } from "./dispose-symbol";
import { LockAcquisitionError, LockLostError } from "./errors";
import { Hold } from "./hold";
import { newToken } from "./ids";
import { type AcquirePlan, LOCK_DEFAULTS, type LockSettings, resolveAcquirePlan } from "./options";
import type { LockStore, Observation } from "./store/lock-store";
import type { LockAcquireConfig, LockStatus } from "./types";
import { assertNonNegativeInteger } from "./validate";

ensureAsyncDisposeSymbol();

/** Makes the store of a holder, given where to hand its background work. */
export type StoreFactory = (background: (work: Promise<unknown>) => void) => LockStore;

/**
 * What a `Lock` and a `Semaphore` share: taking a lease (the lock, or one permit), holding it with a
 * local deadline, a loss signal and auto-extend, and giving it back. Not constructed directly.
 */
export abstract class LeaseHolder implements AsyncDisposable {
  readonly #settings: LockSettings;
  readonly #store: LockStore;
  /** The token this instance holds or was seeded with; kept when a later acquire fails. */
  #token: string | undefined;
  /** The current period of holding, for acquisitions (or confirmations) made by this instance. */
  #hold: Hold | undefined;
  #notHeldSignal: AbortSignal | undefined;
  /** The plan of a call without options, resolved once: the common case, on the hot path. */
  #plainPlan: AcquirePlan | undefined;
  /** Background work still running (releases of abandoned attempts), for `pending`. */
  readonly #running = new Set<Promise<unknown>>();
  /** Until when waits poll without subscribing: the lock was found changing hands faster than polls. */
  readonly #busy = { until: 0 };

  /** @param createStore makes the Redis side, given where to hand background work. */
  protected constructor(settings: LockSettings, createStore: StoreFactory) {
    this.#settings = settings;
    this.#store = createStore((work) => this.#background(work));
    this.#token = settings.uuid;
  }

  /** The lock's id; its Redis key is `prefix` + `id`. */
  get id(): string {
    return this.#settings.id;
  }

  /**
   * The fencing token of the current acquisition (with `fencing`): larger than every token
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
   * nothing (never acquired or confirmed, or released), it is a signal that is already aborted
   * (reason "not-held"); a signal taken during a hold is never aborted by `release()`.
   */
  get signal(): AbortSignal {
    if (this.#hold) return this.#hold.signal;
    this.#notHeldSignal ??= AbortSignal.abort(new LockLostError(this.id, "not-held"));
    return this.#notHeldSignal;
  }

  /**
   * Milliseconds until the lock's local deadline: the lease confirmed by the last successful
   * acquire, renewal, extend or status check, counted on a monotonic clock from when that request
   * was sent, minus an allowance for clock drift (1 % + 2 ms). 0 when not holding.
   */
  get remainingMs(): number {
    return this.#hold?.remainingMs ?? 0;
  }

  /**
   * Settles when the work this lock left running in the background has settled (the release of a
   * token whose acquire was abandoned or timed out); never rejects. Hand it to your platform's
   * `waitUntil` when you do not pass `waitUntil` to the constructor.
   */
  get pending(): Promise<void> {
    return Promise.all(this.#running).then(() => undefined);
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
    if (!outcome.acquired && outcome.error) throw outcome.error;
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
        reason: outcome.reason,
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
    const lease = this.#leaseInPlay();
    // Stop renewing first, so that no renewal can land after the delete.
    this.#hold?.end();
    this.#hold = undefined;
    const released = await this.#store.release(token, lease);
    if (released && this.#token === token) this.#token = undefined;
    return released;
  }

  /**
   * Adds `amt` milliseconds to the lease that remains, while this instance's token holds the key.
   * `extend(0)` changes nothing and tells whether the lock is held, as in 0.2.
   * @param amt milliseconds to add, a non-negative integer.
   * @returns true when the key holds this token (and was extended); false when it does not.
   * @throws {TypeError | RangeError} when `amt` is not a non-negative integer, before any request.
   * @throws {LockRedisError} when Redis could not be reached.
   */
  async extend(amt: number): Promise<boolean> {
    assertNonNegativeInteger("amt", amt, "milliseconds");
    const token = this.#token;
    if (token === undefined) return false;
    const sentAt = monotonicNow();
    const observed = await this.#store.extend(token, amt, this.#leaseInPlay());
    this.#observe(token, sentAt, observed);
    return observed.held;
  }

  /**
   * Asks Redis whether this instance's token holds the key right now. On a lock seeded with a
   * `uuid`, an "ACQUIRED" answer starts holding: `signal`, `remainingMs` and auto-extend then
   * work as after an acquire.
   * @returns "ACQUIRED" when it does, otherwise "FREE" (without a request when there is no token).
   * @throws {LockRedisError} when Redis could not be reached.
   */
  async getStatus(): Promise<LockStatus> {
    const token = this.#token;
    if (token === undefined) return "FREE";
    const sentAt = monotonicNow();
    const observed = await this.#store.status(token, this.#leaseInPlay());
    this.#observe(token, sentAt, observed);
    return observed.held ? "ACQUIRED" : "FREE";
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

  /** The lease of the current hold, or the lock's: bounds how long a quorum waits for one instance. */
  #leaseInPlay(): number {
    return this.#hold?.active ? this.#hold.lease : (this.#settings.hold.lease ?? LOCK_DEFAULTS.lease);
  }

  /**
   * Keeps the hold in step with what Redis just said about `token`: confirms or loses the current
   * hold, and starts one when Redis confirms a token this instance has but does not hold yet (a
   * seeded `uuid`, or a hold given up locally that Redis still honours).
   */
  #observe(token: string, sentAt: number, observed: Observation): void {
    const hold = this.#hold;
    if (hold?.active && hold.token === token) {
      if (observed.held) hold.confirm(sentAt, observed.pttl);
      else hold.lose("taken");
      return;
    }
    if (observed.held && this.#token === token) {
      this.#startHold(this.#defaultPlan(), { token, sentAt, pttl: observed.pttl, fencingToken: undefined });
    }
  }

  async #acquire(config: LockAcquireConfig | undefined): Promise<AcquireOutcome> {
    const plan = config === undefined ? this.#defaultPlan() : resolveAcquirePlan(config, this.#settings);
    if (plan.signal?.aborted) throw plan.signal.reason;
    const token = plan.uuid ?? newToken();
    const outcome = await new Acquisition(
      {
        store: this.#store,
        cleanUp: (taken, lease) => this.#cleanUp(taken, lease),
        leaveQueue: (waiting) => this.#store.leaveQueue(waiting, waiting !== this.#token),
        background: (work) => this.#background(work),
        busy: this.#busy,
      },
      plan,
      token,
    ).run();
    if (outcome.acquired) {
      this.#startHold(plan, {
        token,
        sentAt: outcome.sentAt,
        pttl: outcome.pttl,
        fencingToken: outcome.fencingToken,
      });
    }
    return outcome;
  }

  #startHold(plan: AcquirePlan, confirmed: ConstructorParameters<typeof Hold>[2]): void {
    const previous = this.#hold;
    // A different token could only take a free key, so the previous hold is gone in Redis.
    if (previous?.active && previous.token !== confirmed.token) previous.lose("taken");
    else previous?.end();
    this.#token = confirmed.token;
    const { token } = confirmed;
    this.#hold = new Hold(this.id, plan, confirmed, () => this.#store.renew(token, plan.lease));
  }

  /** Releases `token` if this instance still holds it, ignoring failures (the lease bounds them). */
  async #releaseQuietly(token: string): Promise<void> {
    const lease = this.#leaseInPlay();
    if (this.#hold?.token === token) {
      this.#hold.end();
      this.#hold = undefined;
    }
    try {
      if (await this.#store.release(token, lease)) {
        if (this.#token === token) this.#token = undefined;
      }
    } catch {
      // Best effort: the lease bounds how long such a key can stay.
    }
  }

  /**
   * Releases a token an abandoned request may have taken, unless this instance holds it, and gives
   * up any place that request took in a fair queue.
   */
  async #cleanUp(token: string, lease: number): Promise<void> {
    if (token === this.#token) return;
    try {
      await this.#store.release(token, lease);
    } catch {
      // Best effort: the lease bounds how long such a key can stay.
    }
    await this.#store.leaveQueue(token, true);
  }

  /** Tracks work that outlives a call, and hands it to the platform's `waitUntil` if one was given. */
  #background(work: Promise<unknown>): void {
    const settled = work.then(
      () => undefined,
      () => undefined,
    );
    this.#running.add(settled);
    void settled.then(() => this.#running.delete(settled));
    try {
      this.#settings.waitUntil?.(settled);
    } catch {
      // A platform hook that throws must not turn a background clean-up into a failed call.
    }
  }
}
