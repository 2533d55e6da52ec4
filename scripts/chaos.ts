// `npm run chaos [-- --seconds N --scenario NAME --seed N]`: every kind of lock, over @upstash/redis
// and ioredis, contended for by worker processes while a seeded schedule freezes Redis members,
// drops wake-up subscriptions, stops, stalls and kills workers, and (over HTTP) loses or reorders
// requests. Each holder asks Redis directly whether its token holds while the library says so
// (scripts/chaos/worker.ts); the parent checks across holders (scripts/chaos/run.ts). What counts
// as a violation, and the figures of past runs: scripts/chaos/RESULTS.md.
//
// Always on private servers. Exit code: 0 when clean, 1 on any violation, 2 on bad arguments.

import { cpus } from "node:os";
import { CHAOS_LIMITS } from "./chaos/faults";
import { type ChaosOptions, parseOptions, USAGE } from "./chaos/options";
import { WORKLOAD } from "./chaos/protocol";
import { renderScenario, renderSummary } from "./chaos/report";
import { runScenario, type ScenarioResult } from "./chaos/run";
import { selectScenarios } from "./chaos/scenarios";
import { interruptExitCode, interrupted, runCli } from "./support/cli";

const say = (line = "") => process.stdout.write(`${line}\n`);

const span = ([min, max]: readonly [number, number]) => `${min}-${max}`;

function printHeader(options: ChaosOptions, count: number): void {
  say(
    `Chaos: ${count} scenarios, ${options.seconds} s each, seed ${options.seed}; ` +
      `${cpus().length} cores, Node ${process.version}.`,
  );
  say(
    `  workload: leases ${span(WORKLOAD.leaseMs)} ms, acquire timeouts ${span(WORKLOAD.timeoutMs)} ms ` +
      `(${WORKLOAD.abortShare * 100} % also aborted), auto-extend on ${WORKLOAD.autoExtendShare * 100} % of holds, ` +
      `holds of ${span(WORKLOAD.holdMs)} ms probed every ${span(WORKLOAD.probeGapMs)} ms, ` +
      `${WORKLOAD.sameUuidShare * 100} % of failed acquires retried at once with the same uuid, ` +
      `${WORKLOAD.fencingShare * 100} % fenced where the lock has fencing tokens`,
  );
  say(
    `  faults:   one every ${span(CHAOS_LIMITS.gapMs)} ms: Redis frozen ${span(CHAOS_LIMITS.freezeMs)} ms, ` +
      `CLIENT KILL TYPE pubsub, worker SIGSTOP ${span(CHAOS_LIMITS.workerStopMs)} ms, worker SIGKILL, ` +
      `busy loop ${span(CHAOS_LIMITS.stallMs)} ms, and over HTTP requests reordered (some held ${span(CHAOS_LIMITS.delayMs)} ms); ` +
      "plus the soak's lossy wire (scaled to these leases) per @upstash/redis worker on one Redis",
  );
  say();
}

async function run(options: ChaosOptions): Promise<number> {
  const scenarios = selectScenarios(options.scenario);
  printHeader(options, scenarios.length);
  const results: ScenarioResult[] = [];
  for (const scenario of scenarios) {
    if (interrupted.aborted) break;
    const result = await runScenario(scenario, options.seconds, options.seed, interrupted, (line) =>
      say(`${scenario.name}: ${line}`),
    );
    results.push(result);
    say();
    for (const line of renderScenario(result)) say(line);
    say();
  }
  for (const line of renderSummary(results)) say(line);
  const violations = results.reduce((total, result) => total + result.violations.length, 0);
  say();
  say(
    violations === 0
      ? `Clean (seed ${options.seed}): no violation in ${results.length} scenarios.`
      : `FAILED (seed ${options.seed}): ${violations} violations; rerun one with --scenario NAME --seed ${options.seed}.`,
  );
  if (interrupted.aborted) return interruptExitCode();
  return violations === 0 ? 0 : 1;
}

runCli<ChaosOptions>({ name: "chaos", usage: USAGE, parse: parseOptions, run });
