import { type AcquisitionContext, acquire, type Outcome, type TurnErrors, turnHeld } from "./acquire";
import { type Owner, openOwner } from "./connect";
import { LockAcquisitionError, LockLostError, type LockRedisError } from "./errors";
import { newToken } from "./ids";
import { keyStore } from "./key-store";
import { Lease, leaseContext } from "./lease";
import { resolveAcquirePlan } from "./options";
import type { StoreMaker } from "./store";
import type { LockAcquireConfig, LockCreateConfig, LockStatus } from "./types";
import { check } from "./validate";

/** The acquisition, or the lease it made, that has a Lock instance's turn. */
interface Turn {
  readonly ended: Promise<void>;
  over: boolean;
  /** The error of its lease's release that failed, keeping the turn until a retry or the key's end. */
  failed?: LockRedisError | undefined;
  /** The turn this one was taken over (a same-token acquire's): the instance's again once this ends. */
  overtaken: Turn | undefined;
  end(): void;
}

/** A lease's release failed: while its turn lasts, callers waiting for it fail with `error`. */
function failed(turn: Turn | undefined, error: LockRedisError): void {
  if (turn && !turn.over) turn.failed = error;
}

/**
 * A distributed lock on the Redis key `prefix` + `id`, whose value is the holder's token (a UUID unless you
 * pass one), so 0.2 and this version exclude each other. One lease at a time: a second `acquire()` waits for
 * the first to end, released or run out (within its own retries and timeout, sending nothing), never taking
 * over. Lease methods and getters act on the current lease (or seeded `uuid`). For many holders, use a
 * {@link Semaphore}.
 * @example
 * const lock = new Lock({ id: "invoice:42", redis: Redis.fromEnv() });
 * if (await lock.acquire()) try { await work(); } finally { await lock.release(); }
 */
export class Lock implements AsyncDisposable {
  readonly #owner: Owner;
  #lease: Lease | undefined; // the last acquired (or seeded) lease, kept once ended so calls on it answer
  #seeded: Lease | undefined; // the last lease `#seed` made: it names no hold, so acts on any of its token
  #turn: Turn | undefined;
  #claimSeeded: (() => void) | undefined; // gives the seeded lease, once it holds here, the instance's turn
  // See AcquisitionContext; a failed release that keeps the turn is the turn's own.
  readonly #erring: TurnErrors = {
    error: undefined,
    at: 0,
    since: undefined,
    unanswered: new Map(),
    release: () => this.#turn?.failed,
  };
  #notHeld: AbortSignal | undefined;

  /**
   * Checks the options and creates the lock; sends nothing to Redis.
   * @throws {TypeError | RangeError} when an option is missing or out of range, naming it.
   */
  constructor(config: LockCreateConfig) {
    const { fair, make } = this.storeKind();
    this.#owner = openOwner(config, fair, make);
    if (this.#owner.settings.uuid !== undefined) this.#seed();
  }

  /**
   * A lease of the seeded `uuid`, a token chosen elsewhere, unconfirmed: its first "held" answer starts it, and gives it the
   * instance's turn, as an acquired lease has (a second `acquire()` here waits for it, sending nothing).
   */
  #seed(): Lease {
    const { settings, tokens } = this.#owner;
    const token = settings.uuid as string;
    let turn: Turn | undefined;
    const plan = { ...settings.plain, uuid: token };
    const end = () => turn?.end();
    const context = leaseContext(this.#owner, plan, token, 1, end, (error) => failed(turn, error));
    const lease = new Lease(context, undefined);
    let claiming = false;
    // Confirmed while another caller here has the turn (acquiring): the turn is this lease's once that ends.
    const claim = () => {
      if (turn || claiming || !lease.active || lease !== this.#lease) return;
      if (!this.#turn) {
        turn = this.#newTurn();
        turnHeld(this.#erring);
        return;
      }
      claiming = true;
      void this.#turn.ended.then(() => {
        claiming = false;
        claim();
      });
    };
    this.#claimSeeded = claim;
    this.#lease = lease;
    this.#seeded = lease;
    tokens.add(token, lease, true);
    return lease;
  }

  /**
   * The lease calls act on. A seed that was lost (Redis found it held by none or another, or its deadline
   * passed) makes way for a fresh one, which asks Redis again, as 0.2 did: the token may hold again (taken,
   * or extended, elsewhere). Not one released here (a second release would end that token's newer hold), nor
   * a lease acquired here: it names its hold, and a newer hold of its uuid (a re-run of the job elsewhere)
   * is not its to end.
   */
  #current(): Lease | undefined {
    const lease = this.#lease;
    const renew = lease !== undefined && lease === this.#seeded && lease.lost && !lease.released;
    return renew ? this.#seed() : lease;
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
    return this.#lease?.remainingMs ? this.#lease.fencingToken : undefined; // reading it checks the deadline
  }

  /**
   * The current lease's signal (see {@link Lease.signal}): aborts on loss, never by `release()`. Holding
   * nothing (never acquired or confirmed, or released): a signal already aborted with reason "not-held".
   */
  get signal(): AbortSignal {
    const lease = this.#lease;
    if (lease && (lease.active || lease.lost)) return lease.signal;
    this.#notHeld ??= AbortSignal.abort(new LockLostError(this.id, "not-held"));
    return this.#notHeld;
  }

  /** Milliseconds until the current lease's deadline (see {@link Lease.remainingMs}); 0 when not holding. */
  get remainingMs(): number {
    return this.#lease?.remainingMs ?? 0;
  }

  /** Settles once no background work is left (never rejects): hand it to `waitUntil` unless you pass one. */
  get pending(): Promise<void> {
    return this.#owner.running.pending;
  }

  /**
   * Tries to take the lock, retrying while another owner (or this instance's earlier acquire) holds it.
   * @returns true if now held; false (keeping any prior lease) if held through every try or until `timeout`.
   * @throws {TypeError | RangeError} on invalid options, before any request.
   * @throws {LockRedisError} when Redis did not answer, could not be reached, or refused.
   * @throws the `signal`'s reason when the signal aborts.
   */
  async acquire(config?: LockAcquireConfig): Promise<boolean> {
    const { outcome } = await this.#acquire(config);
    if (!outcome.acquired && outcome.reason === "redis-error") throw outcome.error;
    return outcome.acquired;
  }

  /**
   * Like {@link Lock.acquire}, but resolves with the lock, which suits `await using`: the instance in all
   * but its disposal, which releases the lease this call acquired, never a later caller's (on an instance
   * shared by callers, another may acquire once this one released, before its block ends).
   * @throws {LockAcquisitionError} when not acquired: `reason` says why; `cause` is any LockRedisError.
   * @throws the `signal`'s reason when the signal aborts.
   */
  async acquireOrThrow(config?: LockAcquireConfig): Promise<this> {
    const [, end] = await this.#acquireOwn(config);
    return new Proxy(this, {
      get: (lock, key) => {
        if (key === Symbol.asyncDispose) return end;
        const value: unknown = Reflect.get(lock, key, lock); // getters read the instance's private fields
        return typeof value === "function" ? value.bind(lock) : value;
      },
    });
  }

  /**
   * Acquires (or throws like {@link Lock.acquireOrThrow}), runs `work` with the lease's signal and lease,
   * then releases; returns or throws what `work` does (a failed release is ignored: the key expires).
   * @example
   * const total = await lock.runExclusive((signal) => recompute({ signal }), { autoExtend: true });
   */
  async runExclusive<T>(
    work: (signal: AbortSignal, lease: Lease) => Promise<T> | T,
    config?: LockAcquireConfig,
  ): Promise<T> {
    check("work", work, "function", true);
    const [lease, end] = await this.#acquireOwn(config);
    return lease.run(work, end);
  }

  /**
   * Deletes the key only while it holds the current token (or the seeded `uuid`); stops auto-extend.
   * @returns true if it deleted the lock; false if not held by this token (never, released, expired, taken).
   * @throws {LockRedisError} when Redis could not be reached, refused, or did not answer (as `Lease.release`).
   */
  async release(): Promise<boolean> {
    const lease = this.#current();
    lease?.releasingThroughLock();
    return (await lease?.release()) ?? false;
  }

  /**
   * Adds `amt` ms to the remaining lease while the current token holds the key; `extend(0)` only checks
   * (as in 0.2). With a seeded `uuid`, `true` starts holding: `signal`, `remainingMs`, auto-extend work.
   * @returns true when the key holds this token (and was extended); false when it does not.
   * @throws {TypeError | RangeError} when `amt` is not a non-negative integer, before any request.
   * @throws {LockRedisError} when Redis could not be reached, refused, or gave no answer within the lease.
   */
  async extend(amt: number): Promise<boolean> {
    check("amt", amt, "ms0", true);
    const held = (await this.#current()?.extend(amt)) ?? false;
    if (held) this.#claimSeeded?.();
    return held;
  }

  /**
   * Asks Redis whether the current token holds the key, in the current lease's hold (a seeded `uuid`: any
   * hold of it); with a seeded `uuid`, "ACQUIRED" starts holding.
   * @returns "ACQUIRED" when it does, otherwise "FREE" (without a request when there is no token).
   * @throws {LockRedisError} when Redis could not be reached, refused, or gave no answer within the lease.
   */
  async getStatus(): Promise<LockStatus> {
    const status = (await this.#current()?.getStatus()) ?? "FREE";
    if (status === "ACQUIRED") this.#claimSeeded?.();
    return status;
  }

  /** Releases the current lease (if any) for `await using`; never throws (the key expires with its lease). */
  async [Symbol.asyncDispose](): Promise<void> {
    const lease = this.#current();
    lease?.releasingThroughLock();
    await lease?.releaseLast();
  }

  /**
   * A caller's own acquisition (`acquireOrThrow()`'s scope, `runExclusive()`), or a LockAcquisitionError,
   * and how it ends: its hold, handed on to a newer lease of its uuid maybe, is released by the last caller
   * of it to end, never while another is still in its scope.
   */
  async #acquireOwn(config: LockAcquireConfig | undefined): Promise<[Lease, () => Promise<void>]> {
    const { outcome, lease } = await this.#acquire(config, true);
    if (!outcome.acquired) throw new LockAcquisitionError(this.id, outcome);
    let ended = false; // once: a second disposal must not count as another caller's end
    const end = async () => {
      if (ended) return;
      ended = true;
      // That lease's own hold (by its id), never any hold of the token: another process may share the uuid.
      await (lease as Lease).endClaim()?.releaseLast();
    };
    return [lease as Lease, end];
  }

  /**
   * The lease comes with the outcome, not read from the instance after: a same-uuid caller, which skips the
   * turn, may have made a newer one by the time the caller resumes.
   */
  async #acquire(config: LockAcquireConfig | undefined, disposedByCaller = false): Promise<Acquired> {
    const plan = resolveAcquirePlan(config, this.#owner.settings);
    if (plan.signal?.aborted) throw plan.signal.reason;
    // A lease past its deadline ends now, with its turn: after a pause (a frozen process) its timer may not
    // have run yet, and this call would wait for a turn that is over.
    void this.#lease?.remainingMs;
    const token = plan.uuid ?? newToken();
    const chosen = plan.uuid === undefined ? undefined : this.#owner.tokens.begin(token);
    // This token's lease here, holding: the same holder (a re-send, a hand-back), so no wait for the turn.
    const again = chosen?.holding;
    let mine: Turn | undefined;
    const turn: AcquisitionContext["turn"] = () => {
      // A lease of this token that came to hold meanwhile (a same-uuid acquire started first) is this holder.
      const same = plan.uuid !== undefined && this.#owner.tokens.newest(token)?.active;
      if (this.#turn && this.#turn !== mine && !same) return this.#turn.ended;
      mine ??= this.#newTurn();
      return undefined;
    };
    let outcome: Outcome | undefined;
    let made: Lease | undefined;
    try {
      const { lockId, store, background } = this.#owner;
      const context = { lockId, store, background, plan, token, gate: chosen?.gate, erring: this.#erring };
      outcome = await acquire({ ...context, turn: again ? undefined : turn });
      if (!outcome.acquired) return { outcome };
      // The turn's record stands: the winning try's answer ended what came before it, and a caller this one
      // overtook (a same-uuid acquire) goes on with its own tries (review helper-179).
      if (again) mine = this.#newTurn();
      const held = leaseContext(this.#owner, plan, token, outcome.permit, mine?.end, (error) =>
        failed(mine, error),
      );
      const lease = new Lease(held, outcome);
      made = lease;
      this.#lease = lease;
      if (disposedByCaller) lease.claim();
      return { outcome, lease };
    } finally {
      if (!outcome?.acquired) mine?.end();
      chosen?.finish(outcome, made);
    }
  }

  #newTurn(): Turn {
    // A same-token acquire takes a turn at once, over another caller's acquisition that has it: that one
    // has it back once this ends, so a later caller still waits for it.
    let end!: () => void;
    const ended = new Promise<void>((resolve) => {
      end = resolve;
    });
    const turn: Turn = {
      ended,
      over: false,
      overtaken: this.#turn,
      end: () => {
        turn.over = true;
        let next = turn.overtaken;
        while (next?.over) next = next.overtaken;
        turn.overtaken = next; // ended turns drop out: one that overtook this finds the live one, no chain
        if (this.#turn === turn) this.#turn = next;
        end();
      },
    };
    this.#turn = turn;
    return turn;
  }
}

/** What one acquisition here made: its lease when acquired. */
interface Acquired {
  readonly outcome: Outcome;
  readonly lease?: Lease | undefined;
}
