/** Work left running after a call returned: tracked for `pending`, handed to `waitUntil` when left behind. */
export interface Background {
  /** Tracks `work`, which must not reject (a rejection is swallowed here anyway). */
  readonly add: (work: Promise<unknown>) => void;
  /** Settles once nothing is left running, work added while it waits included; never rejects. */
  readonly pending: Promise<void>;
}

export function newBackground(waitUntil: ((promise: Promise<unknown>) => void) | undefined): Background {
  const running = new Set<Promise<unknown>>();
  return {
    add: (work) => {
      const settled = work.then(
        () => undefined,
        () => undefined,
      );
      running.add(settled);
      void settled.then(() => running.delete(settled));
      try {
        waitUntil?.(settled);
      } catch {
        // A platform hook that throws must not turn a clean-up into a failed call.
      }
    },
    get pending() {
      return (async () => {
        while (running.size > 0) await Promise.all(running);
      })();
    },
  };
}
