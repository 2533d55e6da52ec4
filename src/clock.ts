/** Timers hold at most this many milliseconds; a longer one would fire at once. */
const MAX_TIMER_MS = 2 ** 31 - 1;

/**
 * Calls `callback` after `ms` milliseconds on a timer that does not keep the process alive (Node and Bun
 * `unref()`, Deno `unrefTimer`; browsers and edge runtimes lack the notion) unless `keepAlive`, as a wait a
 * caller awaits must. Longer delays than a timer holds (about 24.8 days) go in steps. Returns a canceller.
 */
export function backgroundTimer(ms: number, callback: () => void, keepAlive = false): () => void {
  let handle: ReturnType<typeof setTimeout>;
  const arm = (left: number) => {
    const step = Math.min(Math.max(0, left), MAX_TIMER_MS);
    handle = setTimeout(() => (left > MAX_TIMER_MS ? arm(left - MAX_TIMER_MS) : callback()), step);
    const unref = (handle as { unref?: () => void }).unref;
    if (keepAlive) return;
    if (typeof unref === "function") unref.call(handle);
    else (globalThis as { Deno?: { unrefTimer?: (id: unknown) => void } }).Deno?.unrefTimer?.(handle);
  };
  arm(ms);
  return () => clearTimeout(handle);
}

/** The current time on a monotonic clock, in milliseconds; immune to wall-clock changes. */
export function monotonicNow(): number {
  return performance.now();
}

/**
 * Milliseconds to take off a lease before trusting it locally: Redis measures the lease, this process the
 * deadline, so allow for their clocks' rates differing (1 % of the lease) and timer granularity (2 ms).
 */
export function clockDriftAllowance(leaseMs: number): number {
  return Math.floor(leaseMs * 0.01) + 2;
}
