import { backgroundTimer, monotonicNow } from "./clock";
import type { FeedEvent } from "./wake/feed";

/** Retry "now", "soon" (in the retry window: all heard it), "cancel" (taken: back to plan) or "grant". */
export type Meaning = "now" | "soon" | "cancel" | "grant" | "ignore";

/** When, after a release, a woken waiter retries: a random moment in `[after, after + spread]` ms. */
export interface RetryWindow {
  readonly after: number;
  readonly spread: number;
}

/** A polling wait between tries: until the planned moment or its Lock's own hold ends; rejects on abort. */
export class Waiting {
  protected pending: Meaning = "ignore"; // asked for since the last try, kept for a wait not yet started
  #wake: ((meaning: Meaning) => void) | undefined;

  /** Whether this waiter is, or is becoming, subscribed. */
  get subscribed(): boolean {
    return false;
  }

  /** Whether an active subscription covered a try sent at monotonic `at`: a later release is announced. */
  covers(_at: number): boolean {
    return false;
  }

  /**
   * After a "held" try: subscribes if it pays; returns whether it did (costs an attempt). Polling never does.
   * @param left attempts left; `span` ms the wait may still last; `polls` tries polling sends within `span`.
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

  close(): void {}

  /** Waits until monotonic `until`; less: within `window` of a release, or on a grant or `local` settling. */
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
