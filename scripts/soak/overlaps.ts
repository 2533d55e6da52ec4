// Finds steps of different workers that ran at the same time: all steps were timed on one
// machine's clock, so two holders overlapped exactly when two such intervals intersect.

import type { Step } from "./protocol";

/** Two steps of different workers that intersect. */
export interface Overlap {
  readonly a: { readonly worker: string; readonly step: Step };
  readonly b: { readonly worker: string; readonly step: Step };
  /** How long both ran, in ms. */
  readonly ms: number;
}

export interface OverlapReport {
  /** Intersecting pairs, in order of start. */
  readonly overlaps: readonly Overlap[];
  /** Per worker, how many of its steps intersect a step of another worker. */
  readonly stepsInvolved: ReadonlyMap<string, number>;
}

interface TimedStep {
  readonly worker: string;
  readonly step: Step;
}

/**
 * Sweeps the steps in order of start, keeping those still running. Intervals that only touch
 * (one ends in the millisecond the other starts) do not count: a handover is that close.
 */
export function findOverlaps(stepsByWorker: ReadonlyMap<string, readonly Step[]>): OverlapReport {
  const all: TimedStep[] = [];
  for (const [worker, steps] of stepsByWorker) for (const step of steps) all.push({ worker, step });
  all.sort((x, y) => x.step[0] - y.step[0]);

  const overlaps: Overlap[] = [];
  const involved = new Set<TimedStep>();
  let running: TimedStep[] = [];
  for (const current of all) {
    const [start, end] = current.step;
    running = running.filter((other) => other.step[1] > start);
    for (const other of running) {
      if (other.worker === current.worker) continue;
      overlaps.push({ a: other, b: current, ms: Math.min(end, other.step[1]) - start });
      involved.add(other);
      involved.add(current);
    }
    running.push(current);
  }
  const stepsInvolved = new Map<string, number>();
  for (const worker of stepsByWorker.keys()) stepsInvolved.set(worker, 0);
  for (const step of involved) stepsInvolved.set(step.worker, (stepsInvolved.get(step.worker) ?? 0) + 1);
  return { overlaps, stepsInvolved };
}
