import { backgroundTimer } from "./clock";

/**
 * Resolves after `ms` milliseconds, or rejects with `signal.reason` as soon as `signal` aborts,
 * clearing its timer so nothing is left pending.
 */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason);
      return;
    }
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}

/**
 * Settles like `work`, unless `signal` aborts first: then it rejects with `signal.reason` at
 * once, and `onAbandoned` receives `work` to clean up after it (it must not reject).
 */
export function raceAbort<T>(
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
    if (signal.aborted) {
      onAbort();
      return;
    }
    signal.addEventListener("abort", onAbort, { once: true });
    work.then(
      (value) => {
        signal.removeEventListener("abort", onAbort);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener("abort", onAbort);
        reject(error);
      },
    );
  });
}

/** What {@link within} resolves with when the time ran out first. */
export const TIMED_OUT: unique symbol = Symbol("timed out");

/**
 * Settles like `work`, or resolves with {@link TIMED_OUT} after `ms` (at once when `ms` ≤ 0):
 * a request that hangs must not hold up a caller with a budget. `onLate` then receives `work`, to
 * clean up whatever it did; it must not reject. An infinite `ms` waits for `work`.
 */
export function within<T>(
  work: Promise<T>,
  ms: number,
  onLate: (work: Promise<T>) => void,
): Promise<T | typeof TIMED_OUT> {
  if (ms === Number.POSITIVE_INFINITY) return work;
  return new Promise((resolve, reject) => {
    const timer = backgroundTimer(ms, () => {
      onLate(work);
      resolve(TIMED_OUT);
    });
    work.then(
      (value) => {
        clearTimeout(timer);
        resolve(value);
      },
      (error: unknown) => {
        clearTimeout(timer);
        reject(error);
      },
    );
  });
}
