import { monotonicNow } from "../timers";
import type { LockEvent } from "./release-channel";

/**
 * Lets lock events cut a waiting acquisition's wait short, without a stampede.
 *
 * A release ends the wait after a random delay within `spreadMs`, so that of all the waiters it
 * wakes, one retries first; its success is announced ("acquired"), and the others, still within
 * their delay, stand down and go back to their normal wait instead of each sending a doomed try.
 * An event that arrives while no one waits (an attempt is in flight) is remembered for the next
 * wait.
 */
export class Doorbell {
  /** How widely woken waiters spread their retries, in milliseconds: a few round trips. */
  spreadMs = 0;
  #released = false;
  #onEvent: ((event: LockEvent | "now") => void) | undefined;

  /** Called by the event feed. */
  readonly ring = (event: LockEvent): void => {
    this.#released = event === "released";
    this.#onEvent?.(event);
  };

  /** Ends the current (or next) wait at once: the subscription just became active. */
  ringNow(): void {
    this.#released = true;
    this.#onEvent?.("now");
  }

  /** Forgets earlier events: called as an attempt is sent, which sees any release before it. */
  reset(): void {
    this.#released = false;
  }

  /** Waits `ms`, or less after a release; rejects with `signal.reason` on abort. */
  wait(ms: number, signal: AbortSignal | undefined): Promise<void> {
    if (signal?.aborted) return Promise.reject(signal.reason);
    const deadline = monotonicNow() + ms;
    return new Promise<void>((resolve, reject) => {
      let timer: ReturnType<typeof setTimeout> | undefined;
      const cleanup = () => {
        clearTimeout(timer);
        this.#onEvent = undefined;
        signal?.removeEventListener("abort", onAbort);
      };
      const onAbort = () => {
        cleanup();
        reject(signal?.reason);
      };
      const wakeAt = (at: number) => {
        clearTimeout(timer);
        timer = setTimeout(
          () => {
            cleanup();
            resolve();
          },
          Math.max(0, at - monotonicNow()),
        );
      };
      const soon = () => Math.min(deadline, monotonicNow() + Math.random() * this.spreadMs);
      this.#onEvent = (event) => {
        if (event === "now") wakeAt(monotonicNow());
        else wakeAt(event === "released" ? soon() : deadline);
      };
      signal?.addEventListener("abort", onAbort, { once: true });
      wakeAt(this.#released ? soon() : deadline);
    });
  }
}
