// The soak's summary: one row per worker process, a total, and the list of problems that fail the run.

import type { FaultCounts } from "./faults";
import type { OverlapReport } from "./overlaps";
import type { Step, WorkerReport } from "./protocol";

/** After its report, a worker must exit on its own within this long: nothing may keep it alive. */
export const EXIT_LIMIT_MS = 5_000;

/** What the parent knows about one worker at the end. */
export interface WorkerOutcome {
  readonly name: string;
  readonly report: WorkerReport | undefined;
  readonly exitCode: number | null;
  /** Milliseconds from its report to its exit; undefined when it had to be killed. */
  readonly exitLagMs: number | undefined;
  readonly faults: FaultCounts;
  /** What the worker's lock sent through its pass-through: requests, and the commands Upstash bills for them. */
  readonly requests: number;
  readonly commands: number;
}

const HEADERS = [
  "worker",
  "holds",
  "steps",
  "lost taken",
  "lost expired",
  "onLost",
  "overlaps",
  "redis conflicts",
  "acquire failed (held/timeout/redis)",
  "released (ok/not held/failed)",
  "renewal waits",
  "unhandled",
  "lib timers left",
  "heap MB start→warm→end (growth since warm)",
  "exit",
];

const mb = (bytes: number) => (bytes / 1024 / 1024).toFixed(1);

function row(outcome: WorkerOutcome, overlapSteps: number): string[] {
  const r = outcome.report;
  const exit =
    outcome.exitLagMs === undefined
      ? "killed"
      : `code ${outcome.exitCode} after ${Math.max(0, outcome.exitLagMs)} ms`;
  if (!r) return [outcome.name, ...HEADERS.slice(1, -1).map(() => "?"), exit];
  const { start, warm, end } = r.heapUsedBytes;
  const growth = `${end >= warm ? "+" : ""}${mb(end - warm)}`;
  const failed = r.acquireFailures;
  return [
    outcome.name,
    String(r.holds),
    String(r.steps.length),
    String(r.losses.taken),
    String(r.losses.expired),
    String(r.onLostCalls),
    String(overlapSteps),
    String(r.occupancyConflicts),
    `${failed.held}/${failed.timeout}/${failed.redisError}${failed.other ? ` (+${failed.other} other)` : ""}`,
    `${r.releases.released}/${r.releases.notHeld}/${r.releases.failed}`,
    String(r.renewalWaits),
    String(r.unhandledRejections.length),
    String(r.pendingLibraryTimers.length),
    `${mb(start)}→${mb(warm)}→${mb(end)} (${growth})`,
    exit,
  ];
}

function table(rows: string[][]): string[] {
  const all = [HEADERS, ...rows];
  const widths = HEADERS.map((_, i) => Math.max(...all.map((cells) => (cells[i] ?? "").length)));
  return all.map((cells) =>
    cells
      .map((cell, i) => (i === 0 ? cell.padEnd(widths[i] ?? 0) : cell.padStart(widths[i] ?? 0)))
      .join("  "),
  );
}

/** The per-process table. */
export function renderTable(outcomes: readonly WorkerOutcome[], overlaps: OverlapReport): string[] {
  return table(outcomes.map((outcome) => row(outcome, overlaps.stepsInvolved.get(outcome.name) ?? 0)));
}

/** Totals over all workers, as lines of text. */
export function renderTotals(outcomes: readonly WorkerOutcome[], overlaps: OverlapReport): string[] {
  const reports = outcomes.flatMap((outcome) => (outcome.report ? [outcome.report] : []));
  const sum = (pick: (r: WorkerReport) => number) => reports.reduce((total, r) => total + pick(r), 0);
  const faults = outcomes.reduce(
    (total, { faults }) => {
      for (const key of Object.keys(total) as (keyof FaultCounts)[]) total[key] += faults[key];
      return total;
    },
    { latencySpikes: 0, droppedReplies: 0, status5xx: 0, refused: 0, outages: 0 },
  );
  const steps = sum((r) => r.steps.length);
  const busyMs = sum((r) => r.steps.reduce((total, [start, end]) => total + (end - start), 0));
  return [
    `holds ${sum((r) => r.holds)}, steps ${steps} (${(busyMs / 1000).toFixed(1)} s inside the critical section), ` +
      `losses ${sum((r) => r.losses.taken)} taken + ${sum((r) => r.losses.expired)} expired, ` +
      `renewal waits ${sum((r) => r.renewalWaits)}`,
    `overlapping step pairs ${overlaps.overlaps.length}, redis occupancy conflicts ${sum((r) => r.occupancyConflicts)}`,
    `faults injected: ${faults.latencySpikes} latency spikes, ${faults.droppedReplies} dropped-reply bursts, ` +
      `${faults.status5xx} 5xx bursts, ${faults.refused} refusal bursts, ${faults.outages} outages; ` +
      `${outcomes.reduce((total, o) => total + o.requests, 0)} requests (${outcomes.reduce((total, o) => total + o.commands, 0)} billed commands) through the pass-throughs`,
  ];
}

/** Library timers still pending when workers reported, by where they were started. */
export function renderPendingTimers(outcomes: readonly WorkerOutcome[]): string[] {
  const bySite = new Map<string, number>();
  for (const site of outcomes.flatMap((outcome) => outcome.report?.pendingLibraryTimers ?? [])) {
    bySite.set(site, (bySite.get(site) ?? 0) + 1);
  }
  return [...bySite].map(([site, count]) => `${count} x ${site.trim()}`);
}

/**
 * Everything that makes the run fail, one line each; empty when clean.
 * @param origin Date.now() at the start of the run, so times print as offsets into it.
 */
export function findProblems(
  outcomes: readonly WorkerOutcome[],
  overlaps: OverlapReport,
  origin: number,
): string[] {
  const problems: string[] = [];
  const at = ([start, end]: Step) => `[${((start - origin) / 1000).toFixed(3)} s, +${end - start} ms]`;
  for (const { a, b, ms } of overlaps.overlaps.slice(0, 10)) {
    problems.push(`overlap of ${ms} ms: ${a.worker} step ${at(a.step)} and ${b.worker} step ${at(b.step)}`);
  }
  if (overlaps.overlaps.length > 10) problems.push(`... and ${overlaps.overlaps.length - 10} more overlaps`);
  for (const outcome of outcomes) {
    const r = outcome.report;
    if (!r) {
      problems.push(`${outcome.name} sent no report (exit code ${outcome.exitCode})`);
      continue;
    }
    if (r.occupancyConflicts > 0)
      problems.push(`${outcome.name}: ${r.occupancyConflicts} redis occupancy conflicts`);
    for (const reason of r.unhandledRejections)
      problems.push(`${outcome.name}: unhandled rejection: ${reason}`);
    for (const error of r.errors) problems.push(`${outcome.name}: error: ${error}`);
    const losses = r.losses.taken + r.losses.expired;
    if (r.onLostCalls !== losses) {
      problems.push(`${outcome.name}: onLost called ${r.onLostCalls} times for ${losses} losses`);
    }
    if (outcome.exitLagMs === undefined) problems.push(`${outcome.name} did not exit on its own; killed`);
    else if (outcome.exitLagMs > EXIT_LIMIT_MS) {
      problems.push(`${outcome.name} took ${outcome.exitLagMs} ms to exit after its report`);
    } else if (outcome.exitCode !== 0) problems.push(`${outcome.name} exited with code ${outcome.exitCode}`);
  }
  return problems;
}
