/**
 * Time on one clock that every process on this machine shares (epoch milliseconds with
 * sub-millisecond precision), so that timestamps taken by different worker processes compare.
 */
export function sharedNow(): number {
  return performance.timeOrigin + performance.now();
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, Math.max(0, ms)));
}

/** Sleeps until `at` on the shared clock. */
export async function sleepUntil(at: number): Promise<void> {
  const remaining = at - sharedNow();
  if (remaining > 0) await sleep(remaining);
}

/** CPU time (user + system) used by this process so far, in milliseconds. */
export function cpuMs(): number {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1000;
}
