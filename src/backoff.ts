/** How long to wait between acquire attempts. */
export interface BackoffPolicy {
  readonly delay: number; // wait after the first failed attempt, ms
  readonly backoff: "fixed" | "exponential";
  readonly maxDelay: number; // upper bound of any wait, ms
  readonly jitter: number; // fraction (0 to 1) of each wait randomised away, to spread out waiters
}

/**
 * The wait after failed attempt `attempt` (from 1), before capping by the holder's lease left or the timeout.
 * @param random a number in [0, 1), injectable for tests.
 */
export function backoffDelay(attempt: number, policy: BackoffPolicy, random: number = Math.random()): number {
  const growth = policy.backoff === "exponential" ? 2 ** Math.min(attempt - 1, 52) : 1;
  const base = Math.min(policy.maxDelay, policy.delay * growth);
  return Math.round(base * (1 - policy.jitter * random));
}

/** Whether every wait from attempt `attempt` on is the same (before jitter): fixed, 0, at the cap, or grown all it can. */
export function backoffSettled(attempt: number, policy: BackoffPolicy): boolean {
  const { backoff, delay, maxDelay } = policy;
  return backoff === "fixed" || delay === 0 || attempt > 52 || delay * 2 ** (attempt - 1) >= maxDelay;
}
