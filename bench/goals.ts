import type { CommandsResults } from "./commands";
import type { ContentionResults, ContentionSummary } from "./contention";
import type { LatencyResults } from "./latency";
import type { GoalResult } from "./results";
import { interquartile } from "./stats";
import type { WireResults } from "./wire";

/** The K at which the contention goals are stated. */
export const GOAL_K = 8;
/** The Ks at which ours must keep up with 0.2.1's throughput. */
export const THROUGHPUT_KS = [8, 16] as const;

interface Inputs {
  readonly wire?: WireResults | undefined;
  readonly commands?: CommandsResults | undefined;
  readonly latency: { http?: LatencyResults | undefined; tcp?: LatencyResults | undefined };
  readonly contention: { http?: ContentionResults | undefined; tcp?: ContentionResults | undefined };
}

/** Checks every goal of the issue against the run's results. */
export function evaluateGoals(inputs: Inputs): GoalResult[] {
  return [
    wireRequests(inputs.wire),
    wireBytes(inputs.wire),
    billedCommands(inputs.commands),
    cpuOverhead(inputs.latency.http, "HTTP"),
    cpuOverhead(inputs.latency.tcp, "TCP"),
    handover(inputs.contention.http, inputs.latency.http, "HTTP"),
    handover(inputs.contention.tcp, inputs.latency.tcp, "TCP"),
    requestsPerAcquire(inputs.contention.http),
    ...THROUGHPUT_KS.map((k) => throughput(inputs.contention.http, k)),
  ];
}

function notMeasured(section: string, goal: string, target: string, why: string): GoalResult {
  return {
    section,
    goal,
    target,
    measured: "not measured",
    pass: undefined,
    verdict: `NOT MEASURED: ${why}`,
  };
}

function percent(value: number, digits = 1): string {
  return `${(value * 100).toFixed(digits)} %`;
}

function wireRequests(wire: WireResults | undefined): GoalResult {
  const section = "1. Wire cost";
  const goal = "One HTTP request per operation (steady state, script cache warm)";
  const target = "1 request each for acquire, extend, getStatus, release";
  const costs = wire?.configs.find((config) => config.autoPipelining)?.ours;
  if (!costs) return notMeasured(section, goal, target, "wire section did not run");
  const ops = ["acquire", "extend", "getStatus", "release"] as const;
  const measured = ops.map((op) => `${op} ${costs[op].requests}`).join(", ");
  const over = ops.filter((op) => costs[op].requests > 1);
  return {
    section,
    goal,
    target,
    measured,
    pass: over.length === 0,
    verdict:
      over.length === 0
        ? "PASS"
        : `MISS: ${over.map((op) => `${op} takes ${costs[op].requests}`).join(", ")}`,
  };
}

function wireBytes(wire: WireResults | undefined): GoalResult {
  const section = "1. Wire cost";
  const goal = `acquire + extend + release request bytes vs 0.2.1 (${wire?.idLength ?? 54}-character id)`;
  const target = "≤ 55 % of 0.2.1's";
  if (!wire) return notMeasured(section, goal, target, "wire section did not run");
  const { ours, v021, ratio } = wire.cycle;
  const allowed = Math.floor(0.55 * v021);
  return {
    section,
    goal,
    target,
    measured: `${ours} B vs ${v021} B = ${percent(ratio)} (with HTTP headers: ${percent(wire.cycleWithHeaders.ratio)})`,
    pass: ratio <= 0.55,
    verdict:
      ratio <= 0.55
        ? `PASS, ${allowed - ours} B to spare`
        : `MISS by ${(ratio * 100 - 55).toFixed(1)} points: ${ours - allowed} B over the ${allowed} B budget`,
    note: "request bodies as the client sends them (auto-pipelining on, the client's default)",
  };
}

function cpuOverhead(latency: LatencyResults | undefined, transport: string): GoalResult {
  const section = transport === "HTTP" ? "2. Uncontended latency" : "4. Over TCP";
  const goal = `Library CPU per acquire + release vs the raw client sending the same commands (${transport})`;
  const target = "within 10 % (ratio ≤ 1.10)";
  const ours = latency?.variants.find((entry) => entry.variant === "ours");
  const raw = latency?.variants.find((entry) => entry.variant === "raw-ours");
  const ratio = latency?.cpuRatioOursToRaw;
  if (!latency || !ours || !raw || ratio === undefined) {
    return notMeasured(section, goal, target, `${transport} latency section did not run`);
  }
  const spread = latency.cpuRatioByRound;
  const [low, high] = interquartile(spread);
  return {
    section,
    goal,
    target,
    measured: `ours ÷ raw ${ratio.toFixed(3)}: median of ${spread.length} per-round ratios, middle half ${low.toFixed(2)}–${high.toFixed(2)} (medians per cycle: ours ${(ours.cpuPerCycle * 1000).toFixed(0)} µs, raw ${(raw.cpuPerCycle * 1000).toFixed(0)} µs)`,
    pass: ratio <= 1.1,
    verdict:
      ratio <= 1.1
        ? `PASS, ${((1.1 - ratio) * 100).toFixed(1)} points to spare`
        : `MISS by ${((ratio - 1.1) * 100).toFixed(1)} points (about ${((ratio - 1) * raw.cpuPerCycle * 1000).toFixed(0)} µs of library CPU per cycle)`,
  };
}

function find(contention: ContentionResults | undefined, variant: string, k: number) {
  return contention?.summary.find((row) => row.variant === variant && row.k === k);
}

function handover(
  contention: ContentionResults | undefined,
  latency: LatencyResults | undefined,
  transport: string,
): GoalResult {
  const section = transport === "HTTP" ? "3. Contention" : "4. Over TCP";
  const goal = `Handover p50 at K = ${GOAL_K}, ours with its defaults (wake-ups on) (${transport})`;
  const row = find(contention, "ours-wake", GOAL_K);
  const rtt = latency?.rttP50;
  if (!row || rtt === undefined) {
    return notMeasured(
      section,
      goal,
      "≤ 2 round trips + 2 ms",
      `${transport} contention or latency did not run`,
    );
  }
  const limit = 2 * rtt + 2;
  const measuredValue = row.waiterHandoverP50;
  const pass = measuredValue <= limit;
  const inactive = row.wakeUpsActive === false;
  return {
    section,
    goal,
    target: `≤ 2 × ${rtt.toFixed(2)} ms (round trip, PING p50) + 2 ms = ${limit.toFixed(2)} ms`,
    measured: `${measuredValue.toFixed(2)} ms to a waiting worker (all handovers: ${row.handoverP50.toFixed(2)} ms)`,
    pass,
    verdict: pass
      ? `PASS, ${(limit - measuredValue).toFixed(2)} ms to spare`
      : `MISS by ${(measuredValue - limit).toFixed(2)} ms`,
    ...(inactive
      ? {
          note: "wake-ups were NOT active (the subscription requests failed), so this is polling: rerun once the proxy serves /subscribe",
        }
      : {}),
  };
}

function requestsPerAcquire(contention: ContentionResults | undefined): GoalResult {
  const section = "3. Contention";
  const goal = `Redis requests per successful acquire at K = ${GOAL_K} (HTTP, release and subscriptions included)`;
  const target = "fewer than 0.2.1 polling every 100 ms";
  const ours: ContentionSummary | undefined = find(contention, "ours-wake", GOAL_K);
  const old = find(contention, "v021-d100", GOAL_K);
  if (!ours || !old) return notMeasured(section, goal, target, "HTTP contention did not run at K = 8");
  const pass = ours.requestsPerAcquire < old.requestsPerAcquire;
  return {
    section,
    goal,
    target,
    measured: `ours ${ours.requestsPerAcquire.toFixed(2)} vs 0.2.1 ${old.requestsPerAcquire.toFixed(2)} (ours polling: ${find(contention, "ours-poll", GOAL_K)?.requestsPerAcquire.toFixed(2) ?? "n/a"}); billed commands ours ${ours.commandsPerAcquire?.toFixed(2) ?? "n/a"} vs 0.2.1 ${old.commandsPerAcquire?.toFixed(2) ?? "n/a"}`,
    pass,
    verdict: pass
      ? `PASS, ${(old.requestsPerAcquire - ours.requestsPerAcquire).toFixed(2)} fewer`
      : `MISS by ${(ours.requestsPerAcquire - old.requestsPerAcquire).toFixed(2)} requests per acquire`,
    ...(ours.wakeUpsActive === false
      ? { note: "wake-ups were NOT active: each waiting acquire's subscription request failed and it polled" }
      : {}),
  };
}

function billedCommands(commands: CommandsResults | undefined): GoalResult {
  const section = "1. Wire cost";
  const goal =
    "Commands Upstash bills per operation, each library with its defaults (`new Lock({ id, redis })`)";
  const target = "≤ 0.2.1's in every row of the commands table";
  if (!commands) return notMeasured(section, goal, target, "the commands table was not measured");
  const rows = commands.rows;
  const over = rows.filter((row) => !(row.ours.commands <= row.v021.commands));
  const odd = rows.filter((row) => row.ours.unexpected > 0 || row.v021.unexpected > 0);
  const count = (value: number) => (Number.isInteger(value) ? String(value) : value.toFixed(2));
  return {
    section,
    goal,
    target,
    measured: rows
      .map((row) => `${row.operation}: ${count(row.ours.commands)} vs ${count(row.v021.commands)}`)
      .join("; "),
    pass: over.length === 0,
    verdict:
      over.length === 0
        ? `PASS in all ${rows.length} rows`
        : `MISS in ${over.length} of ${rows.length} rows: ${over
            .map(
              (row) =>
                `${row.operation} (${count(row.ours.commands)} vs ${count(row.v021.commands)}, ${count(row.ours.commands - row.v021.commands)} more)`,
            )
            .join(", ")}`,
    ...(odd.length > 0
      ? {
          note: `some samples did not end as the row expects (${odd.map((row) => row.operation).join(", ")}): see the table`,
        }
      : {}),
  };
}

function throughput(contention: ContentionResults | undefined, k: number): GoalResult {
  const section = "3. Contention";
  const goal = `Critical sections per second over HTTP at K = ${k}, ours with its defaults (wake-ups on)`;
  const target = "≥ 0.2.1 polling every 100 ms, same run";
  const ours = find(contention, "ours-wake", k);
  const old = find(contention, "v021-d100", k);
  if (!ours || !old) return notMeasured(section, goal, target, `HTTP contention did not run at K = ${k}`);
  const polling = find(contention, "ours-poll", k);
  const pass = ours.sectionsPerSecond >= old.sectionsPerSecond;
  const rounds = ours.rounds === old.rounds ? `${ours.rounds}` : `${ours.rounds} and ${old.rounds}`;
  return {
    section,
    goal,
    target,
    measured: `ours ${ours.sectionsPerSecond.toFixed(1)}/s vs 0.2.1 ${old.sectionsPerSecond.toFixed(1)}/s (ours polling: ${polling ? `${polling.sectionsPerSecond.toFixed(1)}/s` : "n/a"}), medians of ${rounds} rounds`,
    pass,
    verdict: pass
      ? `PASS, ${percent(ours.sectionsPerSecond / old.sectionsPerSecond - 1)} more`
      : `MISS by ${(old.sectionsPerSecond - ours.sectionsPerSecond).toFixed(1)}/s (${percent(1 - ours.sectionsPerSecond / old.sectionsPerSecond)} fewer)`,
  };
}
