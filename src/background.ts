/** Work left running after a call returned: tracked for `pending`, handed to `waitUntil` when left behind. */
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
