import { clockDriftAllowance } from "./drift";
import { type LockLossReason, LockLostError } from "./errors";
import { backgroundTimer, monotonicNow } from "./timers";

/** What a renewal request found. */
export type RenewalOutcome = "renewed" | "not-held";

/** What a hold needs to know when it starts. */
export interface HoldStart {
  readonly lockId: string;
  readonly token: string;
  readonly lease: number;
  readonly fencingToken: number | undefined;
  /** Monotonic time at which the winning acquire request was sent. */
  readonly sentAt: number;
  readonly onLost: ((error: LockLostError) => void) | undefined;
  /** Auto-extend: milliseconds between renewals, and how to send one. */
  readonly renewal: { readonly interval: number; readonly renew: () => Promise<RenewalOutcome> } | undefined;
}

/**
 * One period during which a Lock instance holds its key: the token, the local deadline after
 * which the lock can no longer be known held, the signal that reports loss, and the auto-extend
 * timer. Ends on release, on replacement by a new acquisition, or on loss; after that, nothing
 * of it runs again.
 */
export class Hold {
  readonly token: string;
  readonly fencingToken: number | undefined;
  readonly #lockId: string;
  readonly #lease: number;
  /** Created when first needed: most holds are released without anyone asking for a signal. */
  #controller: AbortController | undefined;
  /** Whether anyone can observe a loss (signal, onLost, auto-extend): only then is the deadline timed. */
  #watched: boolean;
  readonly #onLost: HoldStart["onLost"];
  readonly #renewal: HoldStart["renewal"];
  #deadline = 0;
  #deadlineTimer: ReturnType<typeof setTimeout> | undefined;
  #renewalTimer: ReturnType<typeof setTimeout> | undefined;
  #ended = false;

  constructor(start: HoldStart) {
    this.token = start.token;
    this.fencingToken = start.fencingToken;
    this.#lockId = start.lockId;
    this.#lease = start.lease;
    this.#onLost = start.onLost;
    this.#renewal = start.renewal;
    this.#watched = start.onLost !== undefined || start.renewal !== undefined;
    this.confirm(start.sentAt, start.lease);
    if (this.#renewal) this.#scheduleRenewal(this.#renewal.interval);
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
    if (pttl < 0) return; // -1: the key has no expiry, so there is no deadline to move.
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
      void this.#renew();
    });
  }

  async #renew(): Promise<void> {
    const renewal = this.#renewal;
    if (this.#ended || !renewal) return;
    const sentAt = monotonicNow();
    let outcome: RenewalOutcome;
    try {
      outcome = await renewal.renew();
    } catch {
      // A transient failure: try again soon, until the deadline timer declares the lock lost.
      this.#scheduleRenewal(Math.max(10, Math.floor(renewal.interval / 4)));
      return;
    }
    if (this.#ended) return;
    if (outcome === "not-held") {
      this.lose("taken");
      return;
    }
    this.confirm(sentAt, this.#lease);
    // Count the period from when this renewal was sent, not from its reply: otherwise every round
    // trip would push the next renewal later, and a slow link would outrun the lease.
    this.#scheduleRenewal(sentAt + renewal.interval - monotonicNow());
  }
}
