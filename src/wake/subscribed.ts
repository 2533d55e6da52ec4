import type { Meaning } from "../waiting";
import { Waiting } from "../waiting";
import type { FeedEvent, Listening, LockEvents } from "./feed";

/** A {@link Waiting} that subscribes once it pays, or at once if a shared subscription is active (free). */
export class SubscribedWaiting extends Waiting {
  readonly #events: LockEvents;
  readonly #meaning: (event: FeedEvent) => Meaning;
  readonly #fair: boolean;
  readonly #maxDelay: number;
  readonly #setup = new AbortController();
  #listening: Listening | undefined;
  #subscribed = false;
  #failed = false; // a subscription that could not be set up is not retried by this wait: it polls on
  #grant: FeedEvent | undefined;

  /** @param fair whether the waiter has a seat in a fair line; `maxDelay` its safety poll interval, ms. */
  constructor(events: LockEvents, meaning: (event: FeedEvent) => Meaning, fair: boolean, maxDelay: number) {
    super();
    this.#events = events;
    this.#meaning = meaning;
    this.#fair = fair;
    this.#maxDelay = maxDelay;
    if (events.active()) this.subscribe();
  }

  override get subscribed(): boolean {
    return this.#subscribed;
  }

  override covers(at: number): boolean {
    return this.#listening !== undefined && this.#listening.since <= at;
  }

  /**
   * Subscribes if cheaper than polling until the wait ends (last try, timeout, lease): it, the next poll
   * (for moments before it was active), a safety poll per `maxDelay` (0.2 releases are unannounced) and the
   * try after the wake-up. A fair waiter subscribes at once: only the release handing it the lock wakes it.
   */
  override subscribeIfItPays(left: number, span: number, polls: (span: number) => number): boolean {
    if (this.#subscribed || this.#failed || left < 2) return false;
    if (!this.#fair && (!(span > 0) || 3 + Math.floor(span / this.#maxDelay) >= polls(span))) return false;
    return this.subscribe();
  }

  /** Once a try is covered, a release is announced: only a safety poll every `maxDelay` is left. */
  override nextTryAt(planned: number, sentAt: number, cap: number): number {
    return this.covers(sentAt) ? Math.min(sentAt + this.#maxDelay, cap) : planned;
  }

  subscribe(): boolean {
    if (this.#subscribed) return false;
    this.#subscribed = true;
    this.#events
      .listen((event) => this.#heard(event), this.#setup.signal)
      .then((listening) => {
        if (this.#setup.signal.aborted) listening?.stop();
        else if (listening) this.#listening = listening;
        else {
          this.#subscribed = false;
          this.#failed = true;
        }
      });
    return true;
  }

  override takeGrant(): FeedEvent | undefined {
    const grant = this.#grant;
    this.#grant = undefined;
    if (this.pending === "grant") this.pending = "ignore";
    return grant;
  }

  override close(): void {
    this.#setup.abort();
    this.#listening?.stop();
    this.#listening = undefined;
    this.#subscribed = false;
  }

  #heard(event: FeedEvent): void {
    if (event === "ended") {
      const broken = this.#listening; // broke: announcements meanwhile are lost; retry soon, uncovered
      this.#listening = undefined;
      this.#subscribed = false;
      broken?.stop();
      this.hear("soon");
      return;
    }
    const meaning = this.#meaning(event);
    if (meaning === "grant") this.#grant = event;
    this.hear(meaning);
  }
}
