import type { LockStore } from "../store/lock-store";
import type { Doorbell } from "./doorbell";
import type { StopListening } from "./release-feed";

/**
 * A waiting acquisition's subscription to release announcements. It rings the doorbell once the
 * subscription is active (so the waiter retries at once: a release between its failed attempt
 * and the subscription would otherwise go unseen) and on every release after that. Closing it
 * ends the subscription, also one still being set up.
 */
export class ReleaseWatch {
  #stop: StopListening | undefined;
  #closed = false;
  readonly #setup = new AbortController();
  #activationUnseen = false;

  constructor(store: LockStore, bell: Doorbell) {
    store.listenForEvents(bell.ring, this.#setup.signal).then(
      (stop) => {
        if (this.#closed) {
          stop?.();
          return;
        }
        this.#stop = stop;
        if (stop) {
          this.#activationUnseen = true;
          bell.ringNow();
        }
      },
      () => {
        // Subscribing failed: the waiter keeps polling.
      },
    );
  }

  /**
   * True once, after the subscription became active: the retry it causes is the check for a
   * release that came before it, not one of the caller's attempts.
   */
  takeActivation(): boolean {
    const unseen = this.#activationUnseen;
    this.#activationUnseen = false;
    return unseen;
  }

  close(): void {
    this.#closed = true;
    this.#setup.abort();
    this.#stop?.();
    this.#stop = undefined;
  }
}
