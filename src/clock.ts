type TimerHandle = ReturnType<typeof setTimeout>;

/**
 * Starts a timer that does not keep the process alive: Node and Bun have `unref()`, Deno has
 * `Deno.unrefTimer`, browsers and edge runtimes have no such notion.
 */
export function backgroundTimer(ms: number, callback: () => void): TimerHandle {
  const handle = setTimeout(callback, Math.max(0, ms));
  const unref = (handle as { unref?: () => void }).unref;
  if (typeof unref === "function") {
    unref.call(handle);
  } else {
    const deno = (globalThis as { Deno?: { unrefTimer?: (id: unknown) => void } }).Deno;
    deno?.unrefTimer?.(handle);
  }
  return handle;
}

/** The current time on a monotonic clock, in milliseconds; immune to wall-clock changes. */
export function monotonicNow(): number {
  return performance.now();
}

/**
 * Milliseconds to take off a lease before trusting it locally. Redis measures the lease, this
 * process measures the deadline: allow for the two clocks running at slightly different rates
 * (1 % of the lease) and for timer granularity (2 ms).
 */
export function clockDriftAllowance(leaseMs: number): number {
  return Math.floor(leaseMs * 0.01) + 2;
}
