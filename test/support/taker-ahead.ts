let furthest = 0; // µs

/**
 * A request id, as src/ids.ts makes them, of a try sent by a process whose clock runs `ms` ahead of this
 * one's, and at least 10 s past every id this made before: this process's order moves past each taker it
 * meets (`orderAfter`), so a later test's taker must be further ahead still to be ahead at all.
 */
export function takerAhead(ms = 10_000): string {
  furthest = Math.max(furthest + 10_000_000, (Date.now() + ms) * 1000);
  return `${furthest.toString(36)}-abcdef`;
}
