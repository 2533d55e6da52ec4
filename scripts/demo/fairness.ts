// How evenly one lock shared its turns among workers that kept asking for it, for
// `npm run demo -- --fair`: sections per worker, the least served against the mean, and how
// often the worker that released the lock was the next to hold it.

import { plural, table } from "./summary";
import type { Track } from "./timeline";

/** Turns shown in the turns line, so that it fits on one line of a terminal. */
const TURNS_SHOWN = 90;

export interface WorkerShare {
  name: string;
  /** Critical sections the worker completed (from acquire() to release()). */
  sections: number;
}

export interface Fairness {
  /** One entry per worker, in the order of the tracks. */
  shares: WorkerShare[];
  /** Sections per worker, on average. */
  mean: number;
  /** The worker with the fewest sections; the first of them on a tie. */
  least: WorkerShare;
  /** Pairs of consecutive sections, in the order the lock served them... */
  handovers: number;
  /** ...in which the worker that released the lock was the next to hold it. */
  straightBack: number;
  /** The holder of each section in time order, as its track's number (from 1). */
  turns: number[];
}

export function measureFairness(tracks: readonly Track[]): Fairness {
  const sections = tracks.flatMap((track, index) =>
    track.events.flatMap((event) =>
      event.event === "released" ? [{ worker: index + 1, from: event.heldFrom }] : [],
    ),
  );
  // Sections of one lock never overlap (the demo checks it), so their starts give the order of turns.
  const turns = sections.sort((a, b) => a.from - b.from).map((section) => section.worker);
  const straightBack = turns.filter((worker, i) => i > 0 && worker === turns[i - 1]).length;
  const shares = tracks.map((track, index) => ({
    name: track.name,
    sections: turns.filter((worker) => worker === index + 1).length,
  }));
  const least = shares.reduce((min, share) => (share.sections < min.sections ? share : min));
  return {
    shares,
    mean: turns.length / tracks.length,
    least,
    handovers: Math.max(0, turns.length - 1),
    straightBack,
    turns,
  };
}

function percent(part: number, whole: number): string {
  return whole === 0 ? "-" : `${Math.round((100 * part) / whole)}%`;
}

function leastAgainstMean(f: Fairness): string {
  return `${f.least.sections} / ${f.mean.toFixed(1)} (${percent(f.least.sections, f.mean)})`;
}

function straightBackShare(f: Fairness): string {
  return `${f.straightBack} of ${f.handovers} (${percent(f.straightBack, f.handovers)})`;
}

/** The lines under one lock's summary table. */
export function renderFairness(f: Fairness): string[] {
  const shown = f.turns.slice(0, TURNS_SHOWN).join("");
  const more = f.turns.length > TURNS_SHOWN ? "…" : "";
  return [
    `turns:          ${shown}${more}  (worker numbers, in the order they held the lock)`,
    `least served:   ${f.least.name}, ${plural(f.least.sections, "section")} against a mean of ${f.mean.toFixed(1)} (${percent(f.least.sections, f.mean)})`,
    `straight back:  ${straightBackShare(f)} handovers went back to the worker that had just released the lock`,
  ];
}

/** The locks' numbers side by side, one column per lock. */
export function renderComparison(locks: ReadonlyArray<{ label: string; fairness: Fairness }>): string[] {
  const row = (name: string, cell: (f: Fairness) => string) => [
    name,
    ...locks.map(({ fairness }) => cell(fairness)),
  ];
  return table([
    ["", ...locks.map(({ label }) => label)],
    row("sections per worker", (f) => f.shares.map((share) => share.sections).join(" ")),
    row("least / mean", leastAgainstMean),
    row("taken straight back", straightBackShare),
  ]);
}
