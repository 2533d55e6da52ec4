/**
 * Milliseconds to take off a lease before trusting it locally. Redis measures the lease, this
 * process measures the deadline: allow for the two clocks running at slightly different rates
 * (1 % of the lease) and for timer granularity (2 ms).
 */
export function clockDriftAllowance(leaseMs: number): number {
  return Math.floor(leaseMs * 0.01) + 2;
}
