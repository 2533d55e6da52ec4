/**
 * The work a lock or semaphore leaves running after a call returned (undoing a try that answered
 * after its acquire gave up, finishing a release that outlived its lease): tracked for `pending`,
 * and handed to the platform's `waitUntil` at the moment it is left behind.
 */
export class Background {
  readonly #running = new Set<Promise<unknown>>();
  readonly #waitUntil: ((promise: Promise<unknown>) => void) | undefined;

  constructor(waitUntil: ((promise: Promise<unknown>) => void) | undefined) {
    this.#waitUntil = waitUntil;
  }

  /** Tracks `work`, which must not reject (a rejection is swallowed here anyway). */
  readonly add = (work: Promise<unknown>): void => {
    const settled = work.then(
      () => undefined,
      () => undefined,
    );
    this.#running.add(settled);
    void settled.then(() => this.#running.delete(settled));
    try {
      this.#waitUntil?.(settled);
    } catch {
      // A platform hook that throws must not turn a clean-up into a failed call.
    }
  };

  /** Settles once nothing is left running, work added while it waits included; never rejects. */
  get pending(): Promise<void> {
    return (async () => {
      while (this.#running.size > 0) await Promise.all(this.#running);
    })();
  }
}
