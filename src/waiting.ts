import { backgroundTimer, monotonicNow } from "./clock";
import type { FeedEvent } from "./wake/feed";

/**
 * What an announcement means to a waiter: retry at once ("now"), within the retry window ("soon": a
 * release every waiter heard), go back to the planned wait ("cancel": someone took the lock), the
 * lock was handed to it ("grant"), or nothing ("ignore").
 */
export type Meaning = "now" | "soon" | "cancel" | "grant" | "ignore";

/** When, after a release, a woken waiter retries: a random moment in `[after, after + spread]` ms. */
export interface RetryWindow {
  readonly after: number;
  readonly spread: number;
}

/**
 * How one acquisition waits between its tries: until the planned moment, or sooner when the end
 * of its Lock instance's own hold says so; rejects on abort. This one only polls; a client with
 * wake-ups enabled waits with a subscription too (see `wake/subscribed.ts`), and its announcements
 * reach the wait through {@link Waiting.hear}.
 */
export class Waiting {
  /** What announcements since the last try asked for, kept for a wait that had not started. */
  protected pending: Meaning = "ignore";
  #wake: ((meaning: Meaning) => void) | undefined;

  /** Whether this waiter is, or is becoming, subscribed. */
  get subscribed(): boolean {
    return false;
  }

  /** Whether an active subscription covered a try sent at monotonic time `at`: a later release is announced. */
  covers(_at: number): boolean {
    return false;
  }

  /**
   * After a try found the lock held: subscribes if that pays (see `wake/subscribed.ts`), and
   * returns whether it did, which costs one of the wait's attempts. A wait that only polls never does.
   * @param left attempts left; `span` ms the wait may still last; `polls` how many tries polling
   *   would send within `span`.
   */
  subscribeIfItPays(_left: number, _span: number, _polls: (span: number) => number): boolean {
    return false;
  }

  /** When to try next, given when polling would (`planned`): a covered wait may poll less. */
  nextTryAt(planned: number, _sentAt: number, _cap: number): number {
    return planned;
  }

  /** Forgets earlier wake-ups: called as a try is sent, which sees any release before it. A grant is kept. */
  reset(): void {
    if (this.pending !== "grant") this.pending = "ignore";
  }

  /** The announcement that handed the lock to this waiter, if one came; once. */
  takeGrant(): FeedEvent | undefined {
    return undefined;
  }

  /** Stops listening. */
  close(): void {}

  /**
   * Waits until monotonic time `until`, or less: within `window` after a release, at once on a
   * grant or when `local` settles; rejects with the signal's reason on abort.
   */
  until(
    until: number,
    signal: AbortSignal | undefined,
    window: RetryWindow,
    local?: Promise<void>,
  ): Promise<void> {
    if (signal?.aborted) return Promise.reject(signal.reason);
    return new Promise<void>((resolve, reject) => {
      let cancel = () => {};
      let done = false;
      const finish = (error?: unknown) => {
        if (done) return;
        done = true;
        cancel();
        this.#wake = undefined;
        signal?.removeEventListener("abort", onAbort);
        if (error === undefined) resolve();
        else reject(error);
      };
      const onAbort = () => finish(signal?.reason ?? new Error("aborted"));
      const at = (moment: number) => {
        cancel();
        // Kept alive: the caller awaits this wait, and nothing else may hold the process open.
        cancel = backgroundTimer(moment - monotonicNow(), () => finish(), true);
      };
      this.#wake = (meaning) => {
        if (meaning === "now" || meaning === "grant") finish();
        else if (meaning === "soon")
          at(Math.min(until, monotonicNow() + window.after + Math.random() * window.spread));
        else if (meaning === "cancel") at(until);
      };
      signal?.addEventListener("abort", onAbort, { once: true });
      void local?.then(() => finish());
      at(until);
      if (this.pending !== "ignore") this.#wake(this.pending);
    });
  }

  /** Takes in what an announcement asks for: a wait in progress acts on it; otherwise it is kept. */
  protected hear(meaning: Meaning): void {
    if (meaning === "ignore") return;
    if (this.pending !== "grant" && (meaning !== "soon" || this.pending !== "now")) this.pending = meaning;
    this.#wake?.(meaning);
  }
}
