import { backgroundTimer, clockDriftAllowance, monotonicNow } from "./clock";
import { type LockLossReason, LockLostError } from "./errors";
import type { AcquirePlan } from "./options";
import type { Observation } from "./store/lock-store";

/** What Redis confirmed when a hold starts: the token holds the key for `pttl` ms as of `sentAt`. */
export interface Confirmation {
  readonly token: string;
  /** Monotonic time at which the confirming request was sent. */
  readonly sentAt: number;
  /** Remaining lease in milliseconds (-1: the key has no expiry). */
  readonly pttl: number;
  readonly fencingToken: number | undefined;
}

/** Sends one renewal for the hold's token; rejects when Redis cannot be reached. */
export type Renew = () => Promise<Observation>;

/**
 * One period during which a Lock instance holds its key: the token, the local deadline after
 * which the lock can no longer be known held, the signal that reports loss, and the auto-extend
 * timer. Ends on release, on replacement by a new acquisition, or on loss; after that, nothing
 * of it runs again.
 */
export class Hold {
  readonly token: string;
  readonly fencingToken: number | undefined;
  /** The lease renewals ask for, in milliseconds. */
  readonly lease: number;
  readonly #lockId: string;
  /** Created when first needed: most holds are released without anyone asking for a signal. */
  #controller: AbortController | undefined;
  /** Whether anyone can observe a loss (signal, onLost, auto-extend): only then is the deadline timed. */
  #watched: boolean;
  readonly #onLost: AcquirePlan["onLost"];
  readonly #renewInterval: number | undefined;
  readonly #renew: Renew;
  #deadline = 0;
  #deadlineTimer: ReturnType<typeof setTimeout> | undefined;
  #renewalTimer: ReturnType<typeof setTimeout> | undefined;
  #ended = false;
  /** The hold started with less than its lease (a grant): its next renewal tops it up. */
  #topUpPending: boolean;

  /**
   * @param plan the acquisition's lease, loss handler and auto-extend interval.
   * @param confirmed what Redis confirmed as the hold starts.
   * @param renew how to send a renewal, used when the plan auto-extends.
   */
  constructor(lockId: string, plan: AcquirePlan, confirmed: Confirmation, renew: Renew) {
    this.token = confirmed.token;
    this.fencingToken = confirmed.fencingToken;
    this.lease = plan.lease;
    this.#lockId = lockId;
    this.#onLost = plan.onLost;
    this.#renewInterval = plan.renewInterval;
    this.#renew = renew;
    this.#watched = plan.onLost !== undefined || plan.renewInterval !== undefined;
    // A key without expiry (-1) gives no deadline; count one lease from the start instead.
    this.confirm(confirmed.sentAt, confirmed.pttl >= 0 ? confirmed.pttl : plan.lease);
    // A short grant (a fair lock handed over by its releaser) is topped up to the lease halfway
    // through, with a renewal: auto-extend or not, the holder gets the lease it asked for.
    this.#topUpPending = confirmed.pttl >= 0 && confirmed.pttl < plan.lease;
    if (this.#topUpPending) this.#scheduleRenewal(Math.max(1, Math.floor(confirmed.pttl / 2)));
    else if (this.#renewInterval !== undefined) this.#scheduleRenewal(this.#renewInterval);
  }

  /** Aborts, with a LockLostError as its reason, when the hold is lost. */
  get signal(): AbortSignal {
    this.#controller ??= new AbortController();
    if (!this.#watched) {
      this.#watched = true;
      this.#armDeadline();
    }
    return this.#controller.signal;
  }

  /** True until the hold ends by release, replacement or loss. */
  get active(): boolean {
    return !this.#ended;
  }

  /** Milliseconds until the local deadline; 0 once the hold has ended. */
  get remainingMs(): number {
    return this.#ended ? 0 : Math.max(0, Math.floor(this.#deadline - monotonicNow()));
  }

  /**
   * Records that Redis confirmed the key for `pttl` more milliseconds, as of a request sent at
   * monotonic time `sentAt`: the deadline counts from the send, so it can only be early, never late.
   */
  confirm(sentAt: number, pttl: number): void {
    if (this.#ended) return;
    // -1: the key has no expiry (someone persisted it); keep the deadline known so far.
    if (pttl < 0) return;
    this.#deadline = sentAt + pttl - clockDriftAllowance(pttl);
    if (this.#watched) this.#armDeadline();
  }

  #armDeadline(): void {
    if (this.#ended) return;
    if (this.#deadlineTimer !== undefined) clearTimeout(this.#deadlineTimer);
    this.#deadlineTimer = backgroundTimer(this.#deadline - monotonicNow(), () => this.lose("expired"));
  }

  /** Ends the hold as lost: aborts the signal and calls `onLost`. Does nothing if already ended. */
  lose(reason: LockLossReason): void {
    if (this.#ended) return;
    this.end();
    const error = new LockLostError(this.#lockId, reason);
    this.#controller ??= new AbortController();
    this.#controller.abort(error);
    try {
      const result: unknown = this.#onLost?.(error);
      // An async handler's rejection must not become an unhandled rejection either.
      if (result instanceof Promise) result.catch(() => {});
    } catch {
      // Documented: onLost runs from timers, so its errors are ignored rather than thrown.
    }
  }

  /** Ends the hold without reporting a loss: stops every timer. */
  end(): void {
    this.#ended = true;
    if (this.#deadlineTimer !== undefined) clearTimeout(this.#deadlineTimer);
    if (this.#renewalTimer !== undefined) clearTimeout(this.#renewalTimer);
    this.#deadlineTimer = undefined;
    this.#renewalTimer = undefined;
  }

  #scheduleRenewal(delay: number): void {
    if (this.#ended) return;
    this.#renewalTimer = backgroundTimer(delay, () => {
      void this.#renewOnce();
    });
  }

  async #renewOnce(): Promise<void> {
    const interval = this.#renewInterval;
    if (this.#ended || (interval === undefined && !this.#topUpPending)) return;
    const sentAt = monotonicNow();
    let observed: Observation;
    try {
      observed = await this.#renew();
    } catch {
      // A transient failure: try again soon, until the deadline declares the lock lost (a hold
      // nobody watches has no deadline timer: the top-up stops at the deadline itself).
      if (this.remainingMs === 0) {
        this.lose("expired");
        return;
      }
      this.#scheduleRenewal(Math.max(10, Math.floor((interval ?? this.remainingMs) / 4)));
      return;
    }
    if (this.#ended) return;
    if (!observed.held) {
      this.lose("taken");
      return;
    }
    this.confirm(sentAt, observed.pttl);
    this.#topUpPending = false;
    // Count the period from when this renewal was sent, not from its reply: otherwise every round
    // trip would push the next renewal later, and a slow link would outrun the lease.
    if (interval !== undefined) this.#scheduleRenewal(sentAt + interval - monotonicNow());
  }
}
