import { type AcquisitionContext, acquire, type Outcome } from "./acquire";
import { type Owner, openOwner } from "./connect";
import { LockAcquisitionError, LockLostError } from "./errors";
import { newToken } from "./ids";
import { keyStore } from "./key-store";
import { Lease, leaseContext, runHolding } from "./lease";
import { resolveAcquirePlan } from "./options";
import type { StoreMaker } from "./store";
import type { LockAcquireConfig, LockCreateConfig, LockStatus } from "./types";
import { check } from "./validate";

/** The acquisition, or the lease it made, that has a Lock instance's turn. */
interface Turn {
  readonly ended: Promise<void>;
  end(): void;
}

/**
 * A distributed lock on one Redis key. The key is the lock's `id` (with `prefix`); its value is the
 * holder's token (a UUID unless you pass your own), so 0.2 and this version exclude each other.
 *
 * One instance holds at most one lease at a time, as a lock should: a second `acquire()` on an
 * instance that holds (or is acquiring) waits for the first to end, within its own retry schedule
 * and timeout, without sending anything meanwhile; it never takes over or ends the first. The
 * instance-level `release()`, `extend()`, `getStatus()`, `signal`, `remainingMs` and `fencingToken`
 * act on the current lease (or the seeded `uuid`). For many holders at once, use a {@link Semaphore}.
 *
 * @example
 * const lock = new Lock({ id: "invoice:42", redis: Redis.fromEnv() });
 * if (await lock.acquire()) {
 *   try { await work(); } finally { await lock.release(); }
 * }
 */
export class Lock implements AsyncDisposable {
  readonly #owner: Owner;
  /** The current lease: the last acquired (or seeded) one, kept after it ends so calls on it answer. */
  #lease: Lease | undefined;
  #turn: Turn | undefined;
  #notHeld: AbortSignal | undefined;

  /**
   * Checks the options and creates the lock; sends nothing to Redis.
   * @throws {TypeError | RangeError} when an option is missing or out of range, naming it.
   */
  constructor(config: LockCreateConfig) {
    const { fair, make } = this.storeKind();
    this.#owner = openOwner(config, fair, make);
    const seeded = this.#owner.settings.uuid;
    if (seeded !== undefined)
      this.#lease = new Lease(leaseContext(this.#owner, this.#owner.settings.plain, seeded, 1), undefined);
  }

  /** @internal How this kind of lock keeps its key; a FairLock keeps a line beside it. */
  protected storeKind(): { readonly fair: boolean; readonly make: StoreMaker } {
    return { fair: false, make: keyStore };
  }

  /** The lock's id; its Redis key is `prefix` + `id`. */
  get id(): string {
    return this.#owner.settings.id;
  }

  /** The current lease's fencing token (with `fencing`); undefined when not holding or without fencing. */
  get fencingToken(): number | undefined {
    return this.#lease?.active ? this.#lease.fencingToken : undefined;
  }

  /**
   * The current lease's signal (see {@link Lease.signal}): aborts when the lock is lost. When this
   * instance holds nothing (never acquired or confirmed, or released), a signal that is already
   * aborted (reason "not-held"); a signal read during a hold is never aborted by `release()`.
   */
  get signal(): AbortSignal {
    const lease = this.#lease;
    if (lease && (lease.active || lease.lost)) return lease.signal;
    this.#notHeld ??= AbortSignal.abort(new LockLostError(this.id, "not-held"));
    return this.#notHeld;
  }

  /** Milliseconds until the current lease's local deadline (see {@link Lease.remainingMs}); 0 when not holding. */
  get remainingMs(): number {
    return this.#lease?.remainingMs ?? 0;
  }

  /**
   * Settles when the work this lock left running in the background has settled (undoing a try
   * that answered after its acquire gave up, finishing a release), including work added while it
   * waits; never rejects. Hand it to your platform's `waitUntil` if you do not pass `waitUntil`.
   */
  get pending(): Promise<void> {
    return this.#owner.running.pending;
  }

  /**
   * Tries to take the lock, retrying while another owner (or an earlier acquisition of this
   * instance) holds it.
   * @returns true when this instance now holds the lock; false when it stayed held through every
   *   attempt or until `timeout`. A failed call keeps any lease this instance held.
   * @throws {TypeError | RangeError} on invalid options, before any request.
   * @throws {LockRedisError} when Redis did not answer, could not be reached, or refused.
   * @throws the `signal`'s reason when the signal aborts.
   */
  async acquire(config?: LockAcquireConfig): Promise<boolean> {
    const outcome = await this.#acquire(config);
    if (!outcome.acquired && outcome.reason === "redis-error") throw outcome.error;
    return outcome.acquired;
  }

  /**
   * Like {@link Lock.acquire}, but resolves with the lock itself, which suits `await using`.
   * @throws {LockAcquisitionError} when the lock was not acquired; its `reason` says why, and when
   *   Redis did not answer or failed its `cause` is the LockRedisError.
   * @throws the `signal`'s reason when the signal aborts.
   */
  async acquireOrThrow(config?: LockAcquireConfig): Promise<this> {
    await this.#acquireLease(config);
    return this;
  }

  /**
   * Acquires (or throws like {@link Lock.acquireOrThrow}), runs `work` with the lease's signal and
   * the lease itself, and releases at the end. `work`'s own result or error is what this returns or
   * throws: a failed release is ignored (the key then expires with its lease).
   * @example
   * const total = await lock.runExclusive((signal) => recompute({ signal }), { autoExtend: true });
   */
  async runExclusive<T>(
    work: (signal: AbortSignal, lease: Lease) => Promise<T> | T,
    config?: LockAcquireConfig,
  ): Promise<T> {
    return runHolding(await this.#acquireLease(config), work);
  }

  /**
   * Deletes the key if, and only if, it holds the current lease's token (or the seeded `uuid`).
   * Stops auto-extend.
   * @returns true when this call deleted the lock; false when it was not held by this token
   *   (never acquired, already released, expired, or taken by another owner).
   * @throws {LockRedisError} when Redis could not be reached or refused.
   */
  async release(): Promise<boolean> {
    return (await this.#lease?.release()) ?? false;
  }

  /**
   * Adds `amt` milliseconds to the lease that remains, while the current token holds the key;
   * `extend(0)` only tells whether it does, as in 0.2. On a lock seeded with a `uuid`, a `true`
   * starts holding: `signal`, `remainingMs` and auto-extend then work as after an acquire.
   * @returns true when the key holds this token (and was extended); false when it does not.
   * @throws {TypeError | RangeError} when `amt` is not a non-negative integer, before any request.
   * @throws {LockRedisError} when Redis could not be reached or refused.
   */
  async extend(amt: number): Promise<boolean> {
    check("amt", amt, "ms0", true);
    return (await this.#lease?.extend(amt)) ?? false;
  }

  /**
   * Asks Redis whether the current token holds the key right now; on a lock seeded with a `uuid`,
   * "ACQUIRED" starts holding, as `extend` does.
   * @returns "ACQUIRED" when it does, otherwise "FREE" (without a request when there is no token).
   * @throws {LockRedisError} when Redis could not be reached or refused.
   */
  async getStatus(): Promise<LockStatus> {
    return (await this.#lease?.getStatus()) ?? "FREE";
  }

  /**
   * Releases the current lease, for `await using`. Does nothing when nothing is held, and never
   * throws: if Redis cannot be reached the key expires at the end of its lease.
   */
  async [Symbol.asyncDispose](): Promise<void> {
    await this.release().catch(() => false);
  }

  async #acquireLease(config: LockAcquireConfig | undefined): Promise<Lease> {
    const outcome = await this.#acquire(config);
    if (!outcome.acquired) throw new LockAcquisitionError(this.id, outcome);
    return this.#lease as Lease;
  }

  async #acquire(config: LockAcquireConfig | undefined): Promise<Outcome> {
    const plan = resolveAcquirePlan(config, this.#owner.settings);
    if (plan.signal?.aborted) throw plan.signal.reason;
    const token = plan.uuid ?? newToken();
    // The same token again (a re-sent acquire, a hand-back): the same holder, which need not wait
    // for itself; its lease restarts, and the earlier lease ends without a loss.
    const again = this.#lease?.holdsWith(token) ? this.#lease : undefined;
    let mine: Turn | undefined;
    const turn: AcquisitionContext["turn"] = () => {
      if (this.#turn && this.#turn !== mine) return this.#turn.ended;
      mine ??= this.#newTurn();
      return undefined;
    };
    let outcome: Outcome;
    try {
      const { lockId, store, background } = this.#owner;
      outcome = await acquire({ lockId, store, background, plan, token, turn: again ? undefined : turn });
    } catch (error) {
      mine?.end();
      throw error;
    }
    if (!outcome.acquired) {
      mine?.end();
      return outcome;
    }
    if (again) {
      again.retire();
      mine = this.#newTurn();
    }
    this.#lease = new Lease(leaseContext(this.#owner, plan, token, outcome.permit, mine?.end), outcome);
    return outcome;
  }

  #newTurn(): Turn {
    let end!: () => void;
    const ended = new Promise<void>((resolve) => {
      end = resolve;
    });
    const turn: Turn = {
      ended,
      end: () => {
        if (this.#turn === turn) this.#turn = undefined;
        end();
      },
    };
    this.#turn = turn;
    return turn;
  }
}
