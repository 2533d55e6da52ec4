// What the parent checks across the workers of a scenario, on the holds they reported: that no
// more than `limit` held at once on the machine's one clock, and that fencing tokens grew in the
// order the holds were granted.

/** One hold as the parent knows it: wall-clock ms (Date.now()), shared by every process. */
export interface HoldRecord {
  readonly worker: string;
  /** When acquire() resolved: the grant came before. */
  readonly start: number;
  /** When the holder stopped believing, or its last known deadline if that came first. */
  readonly end: number;
  /** When the acquire() call that got it began: the grant came after. */
  readonly calledAt: number;
  readonly fence: number | null;
}

/**
 * Holds that overlap by less than this do not count: `start` and `end` are whole milliseconds,
 * each read a little before the moment it stands for.
 */
const TOUCH_MS = 1;

const at = (hold: HoldRecord, origin: number) =>
  `${hold.worker} [${((hold.start - origin) / 1000).toFixed(3)} s, +${hold.end - hold.start} ms]`;

/**
 * Every moment more than `limit` holds ran at once, one line each. A holder's hold is what it
 * believed, cut at the deadline the library gave it: a holder that stalls past its deadline no
 * longer holds, whatever it does when it wakes.
 */
export function crowding(holds: readonly HoldRecord[], limit: number, origin: number): string[] {
  const spans = holds.filter((hold) => hold.end - TOUCH_MS > hold.start);
  const events = spans.flatMap((hold) => [
    { time: hold.start, hold, starts: true },
    { time: hold.end - TOUCH_MS, hold, starts: false },
  ]);
  // Ends before starts at the same moment: a hand-over within a millisecond is no overlap.
  events.sort((a, b) => a.time - b.time || Number(a.starts) - Number(b.starts));
  const running = new Set<HoldRecord>();
  const found: string[] = [];
  for (const event of events) {
    if (!event.starts) {
      running.delete(event.hold);
      continue;
    }
    running.add(event.hold);
    if (running.size > limit) {
      found.push(
        `${running.size} holders at once (limit ${limit}): ${[...running].map((hold) => at(hold, origin)).join(", ")}`,
      );
    }
  }
  return found;
}

/**
 * Fencing tokens out of order, one line each. A token is larger than every one issued before, so
 * a hold that began (resolved) before another's acquire() was even called must have the smaller
 * token. With a limit of 1 the holds themselves are in grant order, so each token must also be
 * larger than the one of the hold that began before it.
 */
export function fencingDisorder(holds: readonly HoldRecord[], limit: number, origin: number): string[] {
  const fenced = holds.filter((hold): hold is HoldRecord & { fence: number } => hold.fence !== null);
  const found: string[] = [];
  const byStart = [...fenced].sort((a, b) => a.start - b.start);
  if (limit === 1) {
    // Only holds that lasted: one whose deadline passed before it began proves nothing about order.
    const lasting = byStart.filter((hold) => hold.end > hold.start);
    for (let index = 1; index < lasting.length; index++) {
      const before = lasting[index - 1] as HoldRecord & { fence: number };
      const after = lasting[index] as HoldRecord & { fence: number };
      if (before.start < after.start && before.fence >= after.fence) {
        found.push(
          `token ${after.fence} of ${at(after, origin)} after token ${before.fence} of ${at(before, origin)}`,
        );
      }
    }
  }
  const byCall = [...fenced].sort((a, b) => a.calledAt - b.calledAt);
  let next = 0;
  let largest: (HoldRecord & { fence: number }) | undefined;
  for (const hold of byCall) {
    while (next < byStart.length && (byStart[next] as HoldRecord).start < hold.calledAt) {
      const earlier = byStart[next] as HoldRecord & { fence: number };
      if (!largest || earlier.fence > largest.fence) largest = earlier;
      next += 1;
    }
    if (largest && largest.fence >= hold.fence) {
      found.push(
        `token ${hold.fence} of ${at(hold, origin)}, whose acquire() began after ${at(largest, origin)} with token ${largest.fence}`,
      );
    }
  }
  return found;
}
