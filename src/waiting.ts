import { backgroundTimer, monotonicNow } from "./clock";
import type { QueueTicket, Take } from "./store";

/** The hold a fair release handed a waiter: `pttl` ms as of monotonic `sentAt`, on `permit` (1-based). */
export interface Grant {
  readonly sentAt: number;
  readonly pttl: number;
  readonly permit: number;
  readonly hold: string; // the waiter's id, naming the hold on its permit's list
}

/** Where an acquisition stands after a try that did not take the lock, as {@link Waiter.next} reads it. */
export interface Step {
  /** What the try found; "local": it waited for this instance's turn or a release here, sending nothing. */
  readonly kind: "held" | "error" | "local";
  readonly now: number;
  /** When polling tries next (monotonic ms), already capped at `cap`. */
  readonly planned: number;
  /** No try after this: the holder's lease is surely over, or a try would come too late for the timeout. */
  readonly cap: number;
  /** The last moment a try can be sent and answered within the timeout (Infinity without one). */
  readonly lastTryAt: number;
  readonly tries: number;
  /** Attempts spent so far: tries, plus any subscription. */
  readonly spent: number;
}

/**
 * How one acquisition waits between its tries when more than polling is at hand: wake-ups on release
 * (`enableWakeUps`) or a fair line. A plain acquisition has none and polls ({@link pollUntil}).
 */
export interface Waiter {
  /** A try begins: wake-ups heard before it are stale. Returns a fair waiter's entry for it, if any. */
  trying(lastTry: boolean): QueueTicket | undefined;
  /**
   * What the try sent found; undefined when it failed (it may still have run). False: the answer is no try's
   * (a fair waiter's name in line was spent, and it took a fresh one): one goes again at once, off the attempts.
   */
  answered(take: Take | undefined): boolean;
  /**
   * When to try next: `planned` as polling would, later once releases are announced; undefined to stop (a
   * covered wait whose tries are over). `spent`: attempts it spent meanwhile (a subscription).
   */
  next(step: Step): { readonly at: number; readonly spent: number } | undefined;
  /** Waits as {@link pollUntil} does, or less on a wake-up; resolves with the hold a grant gave, if any. */
  wait(
    until: number,
    signal: AbortSignal | undefined,
    local: Promise<unknown> | undefined,
  ): Promise<Grant | undefined>;
  /** The acquisition is over; `abandoned`: the clean-up of a try left behind, still running. */
  close(abandoned: Promise<unknown> | undefined): void;
}

/**
 * Waits until monotonic `until`, or until `local` settles (this instance's turn, a release here); rejects
 * with the signal's reason on abort. `wake` receives a way to end the wait early, or to move its end.
 */
export function pollUntil(
  until: number,
  signal: AbortSignal | undefined,
  local: Promise<unknown> | undefined,
  wake?: (finish: () => void, moveTo: (moment: number) => void) => void,
): Promise<undefined> {
  if (signal?.aborted) return Promise.reject(signal.reason);
  return new Promise((resolve, reject) => {
    let cancel: (() => void) | undefined;
    const finish = (error?: unknown) => {
      if (!cancel) return;
      cancel();
      cancel = undefined;
      signal?.removeEventListener("abort", onAbort);
      if (error === undefined) resolve(undefined);
      else reject(error);
    };
    const onAbort = () => finish(signal?.reason ?? new Error("aborted"));
    // Kept alive: the caller awaits this wait, and nothing else may hold the process open. A timer may fire a
    // little early by the monotonic clock: armed again for the rest, lest a try planned for a moment go before
    // it (one for the last try's moment is none); twice at most, as a clock faked apart from the timers (a
    // test's fake timers) never catches up.
    const moveTo = (moment: number) => {
      cancel?.();
      let rearmed = 0;
      const arm = () => {
        const fired = () => (monotonicNow() < moment && rearmed++ < 2 ? arm() : finish());
        cancel = backgroundTimer(moment - monotonicNow(), fired, true);
      };
      if (cancel) arm();
    };
    cancel = () => {};
    signal?.addEventListener("abort", onAbort, { once: true });
    void local?.then(() => finish());
    moveTo(until);
    wake?.(() => finish(), moveTo);
  });
}
