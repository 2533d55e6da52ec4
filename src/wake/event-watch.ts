import type { LockStore } from "../store/lock-store";
import type { Doorbell } from "./doorbell";
import type { StopListening } from "./feed-types";

/**
 * A waiting acquisition's subscription to its lock's announcements: rings the doorbell on every
 * release and acquisition, and knows since when it has been active, so the waiter can tell which of
 * its tries were covered (a release after such a try is announced, so polling is not needed to see
 * it). Closing it ends the subscription, also one still being set up.
 */
export class EventWatch {
  #stop: StopListening | undefined;
  #closed = false;
  readonly #setup = new AbortController();
  /** Monotonic time the subscription became active; undefined while pending, after a failure or a break. */
  #activeSince: number | undefined;
  /** Releases announced since the subscription became active. */
  #releases = 0;

  /**
   * @param replaySince monotonic time (ms) of the try the waiter wants covered: a subscription that
   *   was already active (lingering after an earlier wait) replays what it heard since then.
   * @param onActive called once the subscription is active, so the waiter can plan anew.
   */
  constructor(store: LockStore, bell: Doorbell, replaySince?: number, onActive?: () => void) {
    const onEvent: Parameters<LockStore["listenForEvents"]>[0] = (event) => {
      if (event === "ended") this.#activeSince = undefined;
      if (event === "released" && this.#activeSince !== undefined) this.#releases += 1;
      bell.ring(event);
    };
    store.listenForEvents(onEvent, this.#setup.signal, replaySince).then(
      (listening) => {
        if (this.#closed) {
          listening?.stop();
          return;
        }
        this.#stop = listening?.stop;
        this.#activeSince = listening?.coveredFrom;
        if (listening) onActive?.();
      },
      () => {
        // Subscribing failed: the waiter keeps polling.
      },
    );
  }

  /**
   * Whether releases came more often than once per `interval` ms since the subscription became
   * active (one extra allowed, so a single early release does not count): a lock that changes hands
   * that often is found free by polling as well, and its announcements cost more than they save.
   */
  releasesOutpace(interval: number, now: number): boolean {
    if (this.#activeSince === undefined) return false;
    return this.#releases > 1 + (now - this.#activeSince) / interval;
  }

  /** Whether the subscription was active at monotonic time `at` and still is. */
  coveredSince(at: number): boolean {
    return this.#activeSince !== undefined && this.#activeSince <= at;
  }

  close(): void {
    this.#closed = true;
    this.#setup.abort();
    this.#stop?.();
    this.#stop = undefined;
    this.#activeSince = undefined;
  }
}
