// The chaos run's report: per scenario a table of its workers, the faults injected and the
// violations found; at the end one row per scenario and the totals.

import { type Tally, VIOLATION_KINDS, type ViolationKind } from "./protocol";
import type { ScenarioResult, Violation, WorkerSummary } from "./run";
import { CLIENT_ABOUT, KIND_ABOUT } from "./scenarios";

/** Incidents listed per scenario; the rest are counted. */
const INCIDENTS_SHOWN = 12;

function table(headers: readonly string[], rows: readonly string[][]): string[] {
  const all = [headers, ...rows];
  const widths = headers.map((_, i) => Math.max(...all.map((cells) => (cells[i] ?? "").length)));
  return all.map((cells) =>
    cells
      .map((cell, i) => (i === 0 ? cell.padEnd(widths[i] ?? 0) : cell.padStart(widths[i] ?? 0)))
      .join("  "),
  );
}

const WORKER_HEADERS = [
  "worker",
  "library",
  "acquire calls",
  "acquired",
  "failed held/timeout/redis/aborted",
  "same uuid",
  "probes",
  "late/unanswered",
  "lost taken/expired",
  "released ok/not held/failed",
  "stalls seen",
  "pending slow",
  "ending",
];

function workerRow({ name, library, tally: t, ending }: WorkerSummary): string[] {
  return [
    name,
    library === "current" ? "this" : library,
    String(t.acquireCalls),
    String(t.acquired),
    `${t.failed.held}/${t.failed.timeout}/${t.failed.redisError}/${t.failed.aborted}`,
    String(t.sameUuid),
    String(t.probes.sent),
    `${t.probes.late}/${t.probes.unanswered}`,
    `${t.losses.taken}/${t.losses.expired}`,
    `${t.releases.released}/${t.releases.notHeld}/${t.releases.failed}`,
    String(t.stallsSeen),
    String(t.pendingSlow),
    ending,
  ];
}

const sum = (workers: readonly WorkerSummary[], pick: (tally: Tally) => number) =>
  workers.reduce((total, worker) => total + pick(worker.tally), 0);

function counted(counts: Readonly<Record<string, number>>): string {
  const entries = Object.entries(counts).filter(([, count]) => count > 0);
  return entries.length === 0 ? "none" : entries.map(([kind, count]) => `${kind} ${count}`).join(", ");
}

export function violationCounts(result: ScenarioResult): Record<ViolationKind, number> {
  const counts = Object.fromEntries(VIOLATION_KINDS.map((kind) => [kind, 0])) as Record<
    ViolationKind,
    number
  >;
  for (const violation of result.violations) counts[violation.kind] += 1;
  return counts;
}

/** Violations of one kind in one round of one worker (a hold probed again and again), in order. */
function incidents(violations: readonly Violation[]): { first: Violation; count: number }[] {
  const found = new Map<string, { first: Violation; count: number }>();
  violations.forEach((violation, index) => {
    const key =
      violation.round == null ? `#${index}` : `${violation.kind} ${violation.worker} ${violation.round}`;
    const incident = found.get(key);
    if (incident) incident.count += 1;
    else found.set(key, { first: violation, count: 1 });
  });
  return [...found.values()];
}

/** The block of one scenario. */
export function renderScenario(result: ScenarioResult): string[] {
  const { scenario, workers } = result;
  const current = workers.filter((worker) => worker.library === "current").length;
  const old = workers.length - current;
  const lines = [
    `${scenario.name}: ${KIND_ABOUT[scenario.kind]}, over ${CLIENT_ABOUT[scenario.client]}; ` +
      `${current} worker processes${old > 0 ? ` and ${old} on @upstash/lock 0.2.1` : ""} (replacements included), ` +
      `${result.chaosMs / 1000} s of chaos, ${(result.totalMs / 1000).toFixed(1)} s in all`,
    ...table(WORKER_HEADERS, workers.map(workerRow)).map((line) => `  ${line}`),
    `  faults:     ${counted(result.faults)}`,
    `  violations: ${counted(violationCounts(result))}`,
  ];
  const shown = incidents(result.violations);
  for (const { first, count } of shown.slice(0, INCIDENTS_SHOWN)) {
    const who = first.worker ? ` (${first.worker})` : "";
    lines.push(`    - ${first.kind}${who}${count > 1 ? ` x${count}, the first` : ""}: ${first.detail}`);
  }
  if (shown.length > INCIDENTS_SHOWN)
    lines.push(`    ... and ${shown.length - INCIDENTS_SHOWN} more incidents`);
  for (const worker of workers.filter((each) => each.output.length > 0 && each.ending !== "killed")) {
    lines.push(`  ${worker.name} printed:`, ...worker.output.slice(-10).map((line) => `      ${line}`));
  }
  return lines;
}

/** One row per scenario, a total row, and the totals of faults and violations by kind. */
export function renderSummary(results: readonly ScenarioResult[]): string[] {
  const rowOf = (name: string, group: readonly ScenarioResult[]): string[] => {
    const workers = group.flatMap((result) => result.workers);
    const faults = group.reduce(
      (total, result) => total + Object.values(result.faults).reduce((a, b) => a + b, 0),
      0,
    );
    const violations = group.reduce((total, result) => total + result.violations.length, 0);
    return [
      name,
      String(workers.length),
      String(sum(workers, (t) => t.acquired)),
      String(sum(workers, (t) => t.probes.sent)),
      String(sum(workers, (t) => t.probes.late)),
      String(sum(workers, (t) => t.losses.taken + t.losses.expired)),
      String(faults),
      String(violations),
    ];
  };
  const headers = [
    "scenario",
    "processes",
    "acquisitions",
    "probes",
    "late probes",
    "losses",
    "faults",
    "violations",
  ];
  const rows = results.map((result) => rowOf(result.scenario.name, [result]));
  const totalFaults: Record<string, number> = {};
  const totalViolations: Record<string, number> = {};
  for (const result of results) {
    for (const [kind, count] of Object.entries(result.faults))
      totalFaults[kind] = (totalFaults[kind] ?? 0) + count;
    for (const [kind, count] of Object.entries(violationCounts(result))) {
      totalViolations[kind] = (totalViolations[kind] ?? 0) + count;
    }
  }
  return [
    ...table(headers, [...rows, rowOf("total", results)]),
    "",
    `faults by kind:     ${counted(totalFaults)}`,
    `violations by kind: ${counted(totalViolations)}`,
  ];
}
