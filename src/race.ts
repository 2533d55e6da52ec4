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
