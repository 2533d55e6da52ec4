import { monotonicNow } from "../clock";
import type { FeedEvent } from "./feed-types";

const MAX_TIMER_MS = 2 ** 31 - 1;

/** When, after a release, a woken waiter retries: a random moment in `[after, after + spread]` ms. */
export interface RetryWindow {
  readonly after: number;
  readonly spread: number;
}

/**
 * What an event means to a waiter: retry at once ("now": its turn was announced to it alone), soon
 * (within the retry window: a release every waiter heard), go back to the full wait ("cancel":
 * someone else took the lock), or nothing ("ignore").
 */
export type EventMeaning = "now" | "soon" | "cancel" | "ignore";

/** How a waiter without a place in a queue reads events: releases wake it, acquisitions send it back. */
export function unqueuedMeaning(event: FeedEvent): EventMeaning {
  if (event === "acquired") return "cancel";
  // A broken subscription ("ended"), a release, or a turn announced in a fair queue it is not in.
  return "soon";
}

/**
 * Lets lock events cut a waiting acquisition's wait short, without a stampede.
 *
 * A release ends the wait at a random moment of the retry window, so that of all the waiters it
 * wakes, one retries first; its success is announced ("acquired"), and the others, still within
 * their delay, stand down and go back to their normal wait instead of each sending a doomed try.
 * The window opens a round trip after the release, so that a releasing holder that takes the lock
 * straight back (a worker in a loop) is announced before anyone retries. A broken subscription
 * ("ended") counts as a release: retrying is the safe guess. An event that arrives while no one
 * waits (an attempt is in flight) is remembered for the next wait.
 */
export class Doorbell {
  readonly #meaning: (event: FeedEvent) => EventMeaning;
  /** What the events since the last reset asked for, kept for a wait that had not started yet. */
  #pending: EventMeaning = "ignore";
  #onEvent: ((meaning: EventMeaning) => void) | undefined;

  /** @param meaning how the waiter reads each event. */
  constructor(meaning: (event: FeedEvent) => EventMeaning = unqueuedMeaning) {
    this.#meaning = meaning;
  }

  /** Called by the event feed. */
  readonly ring = (event: FeedEvent): void => {
    const meaning = this.#meaning(event);
    if (meaning === "ignore") return;
    if (meaning !== "soon" || this.#pending !== "now") this.#pending = meaning;
    this.#onEvent?.(meaning);
  };

  /** Forgets earlier events: called as an attempt is sent, which sees any release before it. */
  reset(): void {
    this.#pending = "ignore";
  }

  /**
   * Waits `ms`, or less after a release; rejects with `signal.reason` on abort.
   * @param retry when to retry after a release: a few round trips.
   */
  wait(ms: number, signal: AbortSignal | undefined, retry: RetryWindow): Promise<void> {
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
        // Timers take at most 2^31 - 1 ms; a longer one would fire at once.
        const remaining = Math.max(0, at - monotonicNow());
        timer = setTimeout(
          () => {
            if (remaining > MAX_TIMER_MS) {
              wakeAt(at);
              return;
            }
            cleanup();
            resolve();
          },
          Math.min(remaining, MAX_TIMER_MS),
        );
      };
      const soon = () => Math.min(deadline, monotonicNow() + retry.after + Math.random() * retry.spread);
      const wakeFor = (meaning: EventMeaning) => {
        if (meaning === "now") wakeAt(monotonicNow());
        else if (meaning === "soon") wakeAt(soon());
        else wakeAt(deadline);
      };
      this.#onEvent = wakeFor;
      signal?.addEventListener("abort", onAbort, { once: true });
      wakeFor(this.#pending);
    });
  }
}
