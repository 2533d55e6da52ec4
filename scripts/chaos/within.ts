// A race against a timer that never outlives it: a timer left pending would keep a worker alive.

/** Resolves with `promise`'s value, or with `fallback` after `ms`; a later rejection is ignored. */
export async function within<T, F>(promise: Promise<T>, ms: number, fallback: F): Promise<T | F> {
  promise.catch(() => {});
  let timer: NodeJS.Timeout | undefined;
  const expiry = new Promise<F>((resolve) => {
    timer = setTimeout(() => resolve(fallback), Math.max(0, ms));
  });
  try {
    return await Promise.race([promise, expiry]);
  } finally {
    clearTimeout(timer);
  }
}
