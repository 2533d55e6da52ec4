// Refills the docs' tables from a run, so docs/performance.md and docs/upstash.md never quote an older run
// than bench/results/. Each table stands between `<!-- bench:NAME -->` and `<!-- /bench:NAME -->` lines
// (blank lines around it: a line right after a table would render as one of its rows)
// and is made here from the run's results (a missing section leaves its table as it was); the date in each
// "From `npm run bench` of YYYY-MM-DD" line becomes the run's.
import { readFile, writeFile } from "node:fs/promises";
import type { CommandCost } from "./commands";
import type { ContentionResults } from "./contention";
import type { HandoverRow } from "./handover";
import type { LatencyResults } from "./latency";
import type { BenchResults } from "./results";
import { VARIANT_LABELS } from "./variants";

/** The files whose tables a run refills. */
export const DOC_FILES = ["performance.md", "upstash.md"] as const;

type Cell = string | number;
/** A table: its header cells, which columns are numbers (right-aligned), and its rows. */
interface Table {
  readonly header: readonly string[];
  readonly numeric: readonly boolean[];
  readonly rows: readonly (readonly Cell[])[];
}

/**
 * Rewrites each of {@link DOC_FILES} read from `from` into `to` (the same folder for a full run; a quick
 * run writes copies elsewhere, leaving the docs alone). Returns the tables it refilled, by file.
 */
export async function refillDocs(
  results: BenchResults,
  handover: readonly HandoverRow[] | undefined,
  from: URL,
  to: URL,
): Promise<Record<string, string[]>> {
  const tables = docTables(results, handover);
  const refilled: Record<string, string[]> = {};
  for (const file of DOC_FILES) {
    let text = await readFile(new URL(file, from), "utf8");
    refilled[file] = [];
    for (const [name, table] of Object.entries(tables)) {
      const block = new RegExp(`(<!-- bench:${name} -->\n)[\\s\\S]*?(\n<!-- /bench:${name} -->)`, "g");
      if (!table || !block.test(text)) continue;
      text = text.replace(
        block,
        (_all, open: string, close: string) => `${open}\n${markdown(table)}\n${close}`,
      );
      refilled[file].push(name);
    }
    text = text.replace(/(From `npm run bench` of )\d{4}-\d{2}-\d{2}/g, `$1${results.date.slice(0, 10)}`);
    await writeFile(new URL(file, to), text);
  }
  return refilled;
}

/** Every table the docs quote, by marker name; undefined where this run did not measure it. */
function docTables(
  results: BenchResults,
  handover: readonly HandoverRow[] | undefined,
): Record<string, Table | undefined> {
  const { commands, latency, contention, permits, size, scale } = results;
  const fixed = (value: number | undefined, digits = 2) =>
    value === undefined || !Number.isFinite(value) ? "–" : value.toFixed(digits);
  const count = (cost: CommandCost) =>
    Number.isInteger(cost.commands) ? cost.commands : fixed(cost.commands);
  const overhead = (transport: string, run: LatencyResults | undefined) =>
    (run?.variants ?? []).map((entry) => [
      transport,
      VARIANT_LABELS[entry.variant],
      fixed(entry.cycle.p50),
      Math.round(entry.cpuPerCycle * 1000),
      entry.cpuVsRaw === undefined
        ? "–"
        : `${entry.cpuVsRaw >= 1 ? "+" : ""}${((entry.cpuVsRaw - 1) * 100).toFixed(1)} %`,
    ]);
  // K = 8 and 16 (the goals' Ks), with commands over HTTP and requests (each a command) over TCP.
  const busy = (run: ContentionResults | undefined, tcp: boolean): Table | undefined =>
    run && {
      header: [
        "K",
        "Variant",
        "sections/s",
        "to a waiter p50 ms",
        "fairness",
        `${tcp ? "requests" : "commands"} / acquire`,
      ],
      numeric: [true, false, true, true, true, true],
      rows: sortedByK(run)
        .filter((row) => row.k === 8 || row.k === 16)
        .map((row) => [
          row.k,
          row.label,
          fixed(row.sectionsPerSecond, 1),
          waiterMs(row.waiterHandoverP50),
          fixed(row.fairnessRatio),
          fixed(tcp ? row.requestsPerAcquire : row.commandsPerAcquire),
        ]),
    };
  const semaphores = (run: ContentionResults | undefined, tcp: boolean): Table | undefined =>
    run && {
      header: ["K", "Variant", "sections/s", "fairness", `${tcp ? "requests" : "commands"} / acquire`],
      numeric: [true, false, true, true, true],
      rows: sortedByK(run).map((row) => [
        row.k,
        row.label,
        fixed(row.sectionsPerSecond, 1),
        fixed(row.fairnessRatio),
        fixed(tcp ? row.requestsPerAcquire : row.commandsPerAcquire),
      ]),
    };
  const operations: Table | undefined = commands && {
    header: ["Operation", "ours commands", "0.2.1 commands", "ours body B", "0.2.1 body B"],
    numeric: [false, true, true, true, true],
    rows: commands.rows.map((row) => [
      row.operation,
      count(row.ours),
      count(row.v021),
      Math.round(row.ours.bodyBytes),
      Math.round(row.v021.bodyBytes),
    ]),
  };
  return {
    handover: handover && {
      header: ["Transport", "Wait", "p50 ms", "p99 ms"],
      numeric: [false, false, true, true],
      rows: handover.map((row) => [row.transport, row.variant, fixed(row.p50), fixed(row.p99)]),
    },
    operations,
    overhead:
      latency.http || latency.tcp
        ? {
            header: [
              "Transport",
              "Variant",
              "acquire + release p50 ms",
              "CPU per cycle µs",
              "CPU vs the raw client",
            ],
            numeric: [false, false, true, true, true],
            rows: [...overhead("HTTP", latency.http), ...overhead("TCP", latency.tcp)],
          }
        : undefined,
    "contention-http": busy(contention.http, false),
    "contention-tcp": busy(contention.tcp, true),
    "permits-http": semaphores(permits?.http, false),
    "permits-tcp": semaphores(permits?.tcp, true),
    size: size && {
      header: ["Bundle", "minified B", "gzip B", "brotli B"],
      numeric: [false, true, true, true],
      rows: size.entries.map((entry) => [
        entry.name,
        entry.minifiedBytes,
        entry.gzipBytes,
        entry.brotliBytes,
      ]),
    },
    scale: scale?.results[0] && {
      header: [
        "Variant",
        "acquire all ms",
        "renewals/s (expected)",
        "event-loop delay p50 / p99 / max ms",
        "CPU (share of a core)",
        "heap per lock B",
        "RSS per lock B",
        "lost",
        "release all ms",
        "renewals after release",
        "heap left per lock after release B",
      ],
      numeric: [false, ...Array<boolean>(10).fill(true)],
      rows: scale.results.map((row) => [
        row.variant === "ours" ? "ours (autoExtend)" : "redis-semaphore Mutex (refreshInterval)",
        row.acquireAllMs,
        `${row.renewalsPerSecond} (${row.expectedRenewalsPerSecond})`,
        [row.eventLoopDelayMs.p50, row.eventLoopDelayMs.p99, row.eventLoopDelayMs.max]
          .map(waiterMs)
          .join(" / "),
        fixed(row.cpuShareOfOneCore),
        row.heapPerLockBytes,
        row.rssPerLockBytes,
        row.lostDuringWindow,
        row.releaseAllMs,
        row.renewalsAfterRelease,
        row.heapAfterReleasePerLockBytes,
      ]),
    },
    goals: results.goals.length
      ? {
          header: ["Goal", "Measured", "Result"],
          numeric: [false, false, false],
          rows: results.goals.map((goal) => [
            goal.goal,
            goal.measured,
            `**${goal.verdict}**${goal.note ? ` (${goal.note})` : ""}`,
          ]),
        }
      : undefined,
  };
}

function sortedByK(run: ContentionResults): ContentionResults["summary"] {
  return [...run.summary].sort((a, b) => a.k - b.k);
}

/** Milliseconds as the report prints them: 2 decimals below 10, 1 below 100, none above. */
function waiterMs(value: number | undefined): string {
  if (value === undefined || !Number.isFinite(value)) return "–";
  return value < 10 ? value.toFixed(2) : value < 100 ? value.toFixed(1) : value.toFixed(0);
}

/** A markdown table with its columns padded to one width, numbers right-aligned. */
function markdown({ header, numeric, rows }: Table): string {
  const text = [header, ...rows].map((row) => row.map(String));
  const widths = header.map((_, column) => Math.max(3, ...text.map((row) => (row[column] ?? "").length)));
  const line = (cells: readonly string[]) =>
    `| ${cells.map((cell, column) => (numeric[column] ? cell.padStart(widths[column] ?? 0) : cell.padEnd(widths[column] ?? 0))).join(" | ")} |`;
  const rule = widths.map((width, column) =>
    numeric[column] ? `${"-".repeat(width - 1)}:` : "-".repeat(width),
  );
  return [line(text[0] ?? []), `| ${rule.join(" | ")} |`, ...text.slice(1).map(line)].join("\n");
}
