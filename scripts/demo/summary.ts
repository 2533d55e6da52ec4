// The numbers after the run: per-worker acquisitions and waits, and the two overlap checks.

import type { ReleasedEvent } from "./protocol";
import type { Track } from "./timeline";

export interface WorkerSummary {
  name: string;
  acquisitions: number;
  /** Calls to acquire() that returned, whether they got the lock or not. */
  waits: number;
  waitTotalMs: number;
  waitMaxMs: number;
  /** acquire() returned false after all of its attempts. */
  gaveUp: number;
  /** acquire() returned false because the run ended while it was waiting. */
  stoppedWaiting: number;
  heldTotalMs: number;
  /** release() returned false: the lock was no longer this worker's when it let go. */
  lostReleases: number;
}

/** A critical section: from right after acquire() resolved to right before release() was called. */
interface Section {
  worker: string;
  from: number;
  to: number;
}

export interface OverlapReport {
  sections: number;
  /** Pairs of critical sections of different workers that intersect in time. */
  timeOverlaps: Array<[Section, Section]>;
  /** Critical sections in which the Redis occupancy counter saw more than one worker. */
  occupancyOverlaps: ReleasedEvent[];
}

export function summarizeWorker(track: Track): WorkerSummary {
  const summary: WorkerSummary = {
    name: track.name,
    acquisitions: 0,
    waits: 0,
    waitTotalMs: 0,
    waitMaxMs: 0,
    gaveUp: 0,
    stoppedWaiting: 0,
    heldTotalMs: 0,
    lostReleases: 0,
  };
  for (const event of track.events) {
    if (event.event === "acquired" || event.event === "gave-up") {
      summary.waits += 1;
      summary.waitTotalMs += event.waitedMs;
      summary.waitMaxMs = Math.max(summary.waitMaxMs, event.waitedMs);
    }
    if (event.event === "acquired") summary.acquisitions += 1;
    if (event.event === "gave-up") {
      if (event.cutShort) summary.stoppedWaiting += 1;
      else summary.gaveUp += 1;
    }
    if (event.event === "released") {
      summary.heldTotalMs += event.heldTo - event.heldFrom;
      if (!event.released) summary.lostReleases += 1;
    }
  }
  return summary;
}

/** All workers as one: sums, except the longest wait, which is the longest of any. */
export function summarizeAll(tracks: readonly Track[]): WorkerSummary {
  const events = tracks.flatMap((track) => track.events);
  return summarizeWorker({ name: "all", state: "done", spans: [], events });
}

function sectionsOf(tracks: readonly Track[]): { sections: Section[]; releases: ReleasedEvent[] } {
  const sections: Section[] = [];
  const releases: ReleasedEvent[] = [];
  for (const track of tracks) {
    for (const event of track.events) {
      if (event.event !== "released") continue;
      releases.push(event);
      sections.push({ worker: track.name, from: event.heldFrom, to: event.heldTo });
    }
  }
  return { sections, releases };
}

/**
 * Both overlap checks. The time check compares critical sections as each worker timed them on
 * the one wall clock all processes share here; since each section lies inside the interval the
 * lock was really held, any intersection is a real overlap. The Redis check does not depend on
 * clocks at all.
 */
export function findOverlaps(tracks: readonly Track[]): OverlapReport {
  const { sections, releases } = sectionsOf(tracks);
  const timeOverlaps: Array<[Section, Section]> = [];
  for (const [i, a] of sections.entries()) {
    for (const b of sections.slice(i + 1)) {
      if (a.worker !== b.worker && a.from < b.to && b.from < a.to) timeOverlaps.push([a, b]);
    }
  }
  const occupancyOverlaps = releases.filter((event) => event.occupancy > 1);
  return { sections: sections.length, timeOverlaps, occupancyOverlaps };
}

/**
 * How many critical sections overlapped another, by either check. A section is counted once
 * even when both checks, or several other sections, caught it.
 */
export function overlapCount(report: OverlapReport): number {
  const flagged = new Set<string>();
  for (const pair of report.timeOverlaps) for (const s of pair) flagged.add(`${s.worker}@${s.from}`);
  for (const event of report.occupancyOverlaps) flagged.add(`${event.worker}@${event.heldFrom}`);
  return flagged.size;
}

/** "worker-2: <message>" for every error a worker reported. */
export function workerErrors(tracks: readonly Track[]): string[] {
  return tracks.flatMap((track) =>
    track.events.flatMap((event) => (event.event === "error" ? [`${track.name}: ${event.message}`] : [])),
  );
}

export function plural(count: number, noun: string): string {
  return `${count} ${noun}${count === 1 ? "" : "s"}`;
}

function ms(value: number): string {
  return `${Math.round(value)} ms`;
}

function seconds(value: number): string {
  return `${(value / 1000).toFixed(2)} s`;
}

/** Left-aligns the first column and right-aligns the others. */
export function table(rows: string[][]): string[] {
  const widths =
    rows[0]?.map((_, column) => Math.max(...rows.map((row) => (row[column] ?? "").length))) ?? [];
  return rows.map((row) =>
    row
      .map((text, column) => {
        const width = widths[column] ?? 0;
        return column === 0 ? text.padEnd(width) : text.padStart(width);
      })
      .join("   ")
      .trimEnd(),
  );
}

/** One row per worker and a last row for all of them together. */
export function renderSummaryTable(summaries: readonly WorkerSummary[], total: WorkerSummary): string[] {
  const header = [
    "worker",
    "acquired",
    "waits",
    "wait total",
    "wait avg",
    "wait max",
    "gave up",
    "held total",
  ];
  const row = (s: WorkerSummary): string[] => [
    s.name,
    String(s.acquisitions),
    String(s.waits),
    seconds(s.waitTotalMs),
    s.waits === 0 ? "-" : ms(s.waitTotalMs / s.waits),
    ms(s.waitMaxMs),
    String(s.gaveUp),
    seconds(s.heldTotalMs),
  ];
  return table([header, ...summaries.map(row), row(total)]);
}

/** The overlap verdict and its evidence, one line each. */
export function renderOverlaps(report: OverlapReport, origin: number): string[] {
  const count = overlapCount(report);
  const at = (t: number) => `${((t - origin) / 1000).toFixed(3)}s`;
  const interval = (from: number, to: number) => `[${at(from)}, ${at(to)}]`;
  const lines = [
    count === 0
      ? "Overlaps: 0 (no two workers were ever inside the critical section at once)"
      : `Overlaps: ${count} critical sections overlapped another  <-- MUTUAL EXCLUSION VIOLATED`,
    `  time check:  ${plural(report.timeOverlaps.length, "intersecting pair")} among ${plural(report.sections, "critical section")}`,
    `  Redis check: ${plural(report.occupancyOverlaps.length, "critical section")} saw the occupancy counter above 1`,
  ];
  for (const [a, b] of report.timeOverlaps.slice(0, 5)) {
    lines.push(`    ${a.worker} ${interval(a.from, a.to)} intersects ${b.worker} ${interval(b.from, b.to)}`);
  }
  for (const event of report.occupancyOverlaps.slice(0, 5)) {
    lines.push(
      `    ${event.worker} saw ${event.occupancy} workers inside during ${interval(event.heldFrom, event.heldTo)}`,
    );
  }
  return lines;
}
