import { monotonicNow } from "../clock";
import type { FeedEvent } from "./feed-types";

const MAX_TIMER_MS = 2 ** 31 - 1;

/** When, after a release, a woken waiter retries: a random moment in `[after, after + spread]` ms. */
export interface RetryWindow {
  readonly after: number;
  readonly spread: number;
}

/**
 * What an event means to a waiter: the lock was handed to it ("granted": stop waiting, it holds),
 * retry at once ("now"), soon (within the retry window: a release every waiter heard), go back to
 * the full wait ("cancel": someone else took the lock), or nothing ("ignore").
 */
export type EventMeaning = "granted" | "now" | "soon" | "cancel" | "ignore";

/** How a waiter without a place in a line reads events: releases wake it, acquisitions send it back. */
export function unqueuedMeaning(event: FeedEvent): EventMeaning {
  // Someone took the lock: a waiter of its own, or the one in a fair line it was handed to.
  if (event === "acquired" || event.startsWith("granted:")) return "cancel";
  // A broken subscription ("ended") or a release.
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
  /** The event that handed the lock to this waiter, until taken. */
  #grant: FeedEvent | undefined;
  #onEvent: ((meaning: EventMeaning) => void) | undefined;
  #moveDeadline: ((at: number) => void) | undefined;

  /** @param meaning how the waiter reads each event. */
  constructor(meaning: (event: FeedEvent) => EventMeaning = unqueuedMeaning) {
    this.#meaning = meaning;
  }

  /** Called by the event feed. */
  readonly ring = (event: FeedEvent): void => {
    const meaning = this.#meaning(event);
    if (meaning === "ignore") return;
    if (meaning === "granted") this.#grant = event;
    if (this.#pending !== "granted" && (meaning !== "soon" || this.#pending !== "now"))
      this.#pending = meaning;
    this.#onEvent?.(meaning);
  };

  /**
   * Forgets earlier events: called as an attempt is sent, which sees any release before it. A grant
   * is kept: the attempt will find the lock its own, and the grant still tells the wait to end.
   */
  reset(): void {
    if (this.#pending !== "granted") this.#pending = "ignore";
  }

  /** The event that handed the lock to this waiter, if one came; once. */
  takeGrant(): FeedEvent | undefined {
    const grant = this.#grant;
    this.#grant = undefined;
    if (this.#pending === "granted") this.#pending = "ignore";
    return grant;
  }

  /**
   * Moves the end of the wait in progress, if any, to monotonic time `at` (ms): for a waiter whose
   * subscription turned out to cover its last try, so that a release would be announced. A wake-up
   * a release already scheduled stays.
   */
  moveDeadline(at: number): void {
    this.#moveDeadline?.(at);
  }

  /**
   * Waits `ms`, or less after a release; rejects with `signal.reason` on abort.
   * @param retry when to retry after a release: a few round trips.
   */
  wait(ms: number, signal: AbortSignal | undefined, retry: RetryWindow): Promise<void> {
    if (signal?.aborted) return Promise.reject(signal.reason);
    let deadline = monotonicNow() + ms;
    return new Promise<void>((resolve, reject) => {
      let timer: ReturnType<typeof setTimeout> | undefined;
      let wokenSoon = false;
      const cleanup = () => {
        clearTimeout(timer);
        this.#onEvent = undefined;
        this.#moveDeadline = undefined;
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
        // At once, not by a 0 ms timer, which fires a millisecond later at the earliest.
        if (meaning === "now" || meaning === "granted") {
          cleanup();
          resolve();
          return;
        }
        wokenSoon = meaning === "soon";
        wakeAt(wokenSoon ? soon() : deadline);
      };
      this.#onEvent = wakeFor;
      this.#moveDeadline = (at) => {
        deadline = at;
        if (!wokenSoon) wakeAt(deadline);
      };
      signal?.addEventListener("abort", onAbort, { once: true });
      wakeFor(this.#pending);
    });
  }
}
