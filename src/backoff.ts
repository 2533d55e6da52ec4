/** How long to wait between acquire attempts. */
export interface BackoffPolicy {
  /** Wait after the first failed attempt, in milliseconds. */
  readonly delay: number;
  readonly backoff: "fixed" | "exponential";
  /** Upper bound of any wait, in milliseconds. */
  readonly maxDelay: number;
  /** Fraction (0 to 1) of each wait that is randomised away, to spread out waiters. */
  readonly jitter: number;
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
