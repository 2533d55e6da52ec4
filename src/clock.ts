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
