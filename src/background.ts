import { backgroundTimer } from "./clock";

/** Work left running after a call returned: tracked for `pending`, handed to `waitUntil` when left behind. */
export interface Background {
  /** Tracks `work`, which must not reject (a rejection is swallowed here anyway). */
  readonly add: (work: Promise<unknown>) => void;
  /** Settles once nothing is left running, work added while it waits included; never rejects. */
  readonly pending: Promise<void>;
}

export function newBackground(waitUntil: ((promise: Promise<unknown>) => void) | undefined): Background {
  const running = new Set<Promise<unknown>>();
  const ignore = () => undefined;
  return {
    add: (work) => {
      const settled = work.then(ignore, ignore);
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
        if (running.size === 0) return;
        // Awaited, the work keeps the process alive: its retries wait on timers that do not (left behind,
        // it must not), and an HTTP client's idle sockets do not either.
        const release = backgroundTimer(Number.MAX_SAFE_INTEGER, () => {}, true);
        try {
          while (running.size > 0) await Promise.all(running);
        } finally {
          release();
        }
      })();
    },
  };
}
