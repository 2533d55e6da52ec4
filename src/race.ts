import { backgroundTimer, monotonicNow } from "./clock";

/** What {@link within} resolves with when the time ran out first. */
export const TIMED_OUT: unique symbol = Symbol("timed out");

/**
 * Settles like `work`, or resolves {@link TIMED_OUT} a turn of the event loop after `ms` (never if infinite):
 * a hanging request must not hold up a caller with a budget. `onLate` then cleans up `work` (must not reject).
 * @param keepAlive whether the timer keeps the process alive (a caller awaits it: `work` may rest on no
 *   handle that does, such as an idle HTTP socket and a background retry's timer); false for work nobody
 *   awaits (a renewal).
 */
export function within<T>(
  work: Promise<T>,
  ms: number,
  onLate: (work: Promise<T>) => void,
  keepAlive = true,
): Promise<T | typeof TIMED_OUT> {
  if (ms === Number.POSITIVE_INFINITY) return work;
  return new Promise((resolve, reject) => {
    const late = () => {
      onLate(work);
      resolve(TIMED_OUT);
    };
    // An answer that came while this process did not run (a frozen process, a blocked event loop) is read in
    // the turn after the timers': look once more before calling it late. That turn keeps the process alive:
    // a caller's own keep-alive, of `ms` too, may have just ended.
    let cancel = backgroundTimer(ms, () => (cancel = backgroundTimer(0, late, true)), keepAlive);
    void work.then(resolve, reject).finally(() => cancel());
  });
}

/**
 * Whether a wait of `bound` ms begun at monotonic `since` ended half its bound late or more (and over 50 ms):
 * its timer ran that late, so this process did not run meanwhile (frozen, its event loop blocked), and a
 * request sent at `since` may not even have left. No slow Redis makes a timer late.
 */
export function overdue(since: number, bound: number): boolean {
  return monotonicNow() - since >= Math.max(bound, 0) * 1.5 + 50;
}

/** Like `work`, but rejects with `signal.reason` on abort; then `onAbandoned` (must not reject) cleans up. */
export function abortable<T>(
  work: Promise<T>,
  signal: AbortSignal | undefined,
  onAbandoned: (work: Promise<T>) => void,
): Promise<T> {
  if (!signal) return work;
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => {
      onAbandoned(work);
      reject(signal.reason);
    };
    if (signal.aborted) return void onAbort();
    signal.addEventListener("abort", onAbort, { once: true });
    // Off in the tick `work` settles: an abort a microtask later must not abandon (undo) a try that won.
    const settled =
      <A>(settle: (value: A) => void) =>
      (value: A) => {
        signal.removeEventListener("abort", onAbort);
        settle(value);
      };
    void work.then(settled(resolve), settled(reject));
  });
}

/**
 * Resolves after `ms` milliseconds, longer than one timer holds too (`Debounce`'s `wait` has no upper bound);
 * keeps a process alive, as a caller's own wait should.
 */
export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => backgroundTimer(ms, resolve, true));
}
