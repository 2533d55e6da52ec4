import { setTimeout as pause } from "node:timers/promises";

export { pause };

/** Milliseconds on the monotonic clock the library uses for its deadlines. */
export const now = (): number => performance.now();

/**
 * Resolves with the monotonic time at which `signal` aborts. Call it right after acquiring, so that
 * the moment is taken by a listener and not by a later poll.
 */
export function abortTime(signal: AbortSignal): Promise<number> {
  if (signal.aborted) return Promise.resolve(now());
  return new Promise((resolve) => signal.addEventListener("abort", () => resolve(now()), { once: true }));
}

/** Settles like `promise`, or rejects after `ms` so that a hang fails the test with a reason. */
export async function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: still pending after ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/** Polls `probe` every `intervalMs` until it is true; throws after `timeoutMs`. A bounded loop, never a hang. */
export async function waitUntil(
  probe: () => boolean | Promise<boolean>,
  what: string,
  { timeoutMs = 5_000, intervalMs = 10 } = {},
): Promise<void> {
  const deadline = now() + timeoutMs;
  while (!(await probe())) {
    if (now() > deadline) throw new Error(`${what}: not true after ${timeoutMs} ms`);
    await pause(intervalMs);
  }
}
