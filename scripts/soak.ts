// `npm run soak [-- --seconds N --workers N --poll --seed N]`: worker processes contend for one lock with
// auto-extend and a short lease while every one of their requests crosses a pass-through that
// injects random faults. Every holder respects its lock (scripts/soak/worker.ts); the soak checks
// that no two holders ever worked at the same time, on one clock and through a Redis counter, and
// prints per process: holds, losses, overlaps, acquire failures and heap growth.
//
// Always on a private local stack (it never touches UPSTASH_REDIS_REST_URL). Whatever it starts it
// stops, also on Ctrl-C. Exit code: 0 when clean, 1 on any problem, 2 on bad arguments.

import { setTimeout as pause } from "node:timers/promises";
import { Redis } from "@upstash/redis";
import { type LocalStack, startLocalStack } from "../stack/local-stack";
import { type PassThrough, startPassThrough } from "../test/support/pass-through";
import { FAULT_LIMITS, FaultInjector, type Random, seededRandom } from "./soak/faults";
import { parseOptions, type SoakOptions, USAGE } from "./soak/options";
import { findOverlaps } from "./soak/overlaps";
import {
  parseWorkerLine,
  type SoakWorkerConfig,
  type Step,
  WORKLOAD,
  type WorkerLine,
  type WorkerReport,
} from "./soak/protocol";
import {
  EXIT_LIMIT_MS,
  findProblems,
  renderPendingTimers,
  renderTable,
  renderTotals,
  type WorkerOutcome,
} from "./soak/report";
import { interruptExitCode, interrupted, runCli } from "./support/cli";
import { startWorker, type WorkerProcess } from "./support/workers";

/** tsx on two cores compiles each worker in about a second; this only catches a hung start. */
const READY_TIMEOUT_MS = 60_000;
const WORKER_SCRIPT = new URL("./soak/worker.ts", import.meta.url);
/** After the deadline: a worker finishes its hold (at most `holdMs`) and reports. */
const FINISH_TIMEOUT_MS = 30_000;

const say = (line = "") => process.stdout.write(`${line}\n`);

/** Resolves with the promise's value, or "timeout" after `ms`, or "interrupted" (when interruptible). */
function awaitWithin<T>(
  promise: Promise<T>,
  ms: number,
  interruptible = true,
): Promise<T | "timeout" | "interrupted"> {
  let timer: NodeJS.Timeout | undefined;
  let onInterrupt: (() => void) | undefined;
  const cutShort = new Promise<"timeout" | "interrupted">((resolve) => {
    timer = setTimeout(() => resolve("timeout"), ms);
    if (!interruptible) return;
    onInterrupt = () => resolve("interrupted");
    if (interrupted.aborted) onInterrupt();
    else interrupted.addEventListener("abort", onInterrupt, { once: true });
  });
  return Promise.race([promise, cutShort]).finally(() => {
    clearTimeout(timer);
    if (onInterrupt) interrupted.removeEventListener("abort", onInterrupt);
  });
}

function printHeader(options: SoakOptions, stack: LocalStack, lockId: string): void {
  say(
    `Soak: ${options.workers} worker processes contend for one lock for ${options.seconds} s under random faults.`,
  );
  say(`  stack:  ${stack.url} -> ${stack.redisUrl} (private), one pass-through per worker`);
  say(
    `  lock:   ${lockId}, lease ${WORKLOAD.leaseMs} ms, autoExtend (every ${Math.floor(WORKLOAD.leaseMs / 3)} ms), ` +
      `acquire timeout ${WORKLOAD.acquireTimeoutMs} ms, ` +
      (options.poll ? "no wake-ups (--poll)" : "enableWakeUps (subscriptions straight to the proxy)"),
  );
  say(
    `  work:   holds of ${WORKLOAD.holdMs.join("-")} ms in steps of ${WORKLOAD.stepMs.join("-")} ms; a step starts only ` +
      `with the signal not aborted and ${WORKLOAD.stepMs[1] + WORKLOAD.stepSafetyMs} ms of lease left`,
  );
  say(
    `  faults: every ${FAULT_LIMITS.gapMs.join("-")} ms per worker, one of: latency ${FAULT_LIMITS.latencyMs.join("-")} ms ` +
      `for ${FAULT_LIMITS.latencyDurationMs.join("-")} ms, ${FAULT_LIMITS.droppedReplies.join("-")} dropped replies, ` +
      `${FAULT_LIMITS.status5xx.join("-")} 503s, ${FAULT_LIMITS.refusedRequests.join("-")} refused requests, ` +
      `an outage of ${FAULT_LIMITS.outageMs.join("-")} ms (seed ${options.seed})`,
  );
}

/** One worker, its pass-through and the faults injected into it. */
interface Lane {
  readonly worker: WorkerProcess;
  readonly passThrough: PassThrough;
  readonly injector: FaultInjector;
  /** The worker's report, once it arrived, and when (Date.now()). */
  report: { report: WorkerReport; at: number } | undefined;
}

/** Starts the lane of worker `name`: its pass-through, then the worker (scripts/soak/worker.ts). */
async function startLane(
  name: string,
  settings: Omit<SoakWorkerConfig, "name" | "lockUrl">,
  target: string,
  random: Random,
): Promise<Lane> {
  const passThrough = await startPassThrough({ target });
  const config: SoakWorkerConfig = { ...settings, name, lockUrl: passThrough.url };
  const lane: Lane = {
    passThrough,
    injector: new FaultInjector(passThrough, random),
    report: undefined,
    worker: startWorker<WorkerLine>({
      name,
      script: WORKER_SCRIPT,
      config,
      nodeArgs: ["--expose-gc"],
      parse: parseWorkerLine,
      isReady: (line) => line.type === "ready",
      onMessage: (line, at) => {
        if (line.type === "report") lane.report = { report: line, at };
      },
    }),
  };
  return lane;
}

/** Waits for a worker's report and exit; kills it if either takes too long. */
async function settle(lane: Lane): Promise<WorkerOutcome> {
  const { worker, injector, passThrough } = lane;
  const outcome = (exitCode: number | null, exitLagMs: number | undefined): WorkerOutcome => ({
    name: worker.name,
    report: lane.report?.report,
    exitCode,
    exitLagMs,
    faults: injector.counts,
    requests: passThrough.stats.requests,
    commands: passThrough.stats.commands,
  });
  // Not cut short by an interrupt: the workers were asked to stop, and report before they exit.
  const exit = await awaitWithin(worker.exited, FINISH_TIMEOUT_MS + EXIT_LIMIT_MS, false);
  if (typeof exit === "object") {
    return outcome(exit.code, lane.report ? exit.at - lane.report.at : 0);
  }
  const killed = await worker.kill();
  return outcome(killed.code, undefined);
}

/** Polls until the lock key is gone: every worker has released or let its lease run out. */
async function lockKeyLeft(redis: Redis, lockId: string): Promise<boolean> {
  const until = Date.now() + WORKLOAD.leaseMs + 1_000;
  while (Date.now() < until) {
    if ((await redis.exists(lockId)) === 0) return false;
    await pause(20);
  }
  return true;
}

async function run(options: SoakOptions, cleanups: Array<() => Promise<unknown>>): Promise<number> {
  const stack = await startLocalStack();
  cleanups.push(() => stack.stop());
  const lockId = `soak:${crypto.randomUUID()}`;
  const occupancyKey = `${lockId}:occupancy`;
  printHeader(options, stack, lockId);
  if (options.careless) {
    say(
      "  CONTROL RUN (--careless): no auto-extend, holders ignore their signal and lease; overlaps expected.",
    );
  }

  const random = seededRandom(options.seed);
  const lanes: Lane[] = [];
  cleanups.push(async () => {
    for (const lane of lanes) lane.injector.stop();
    await Promise.all(lanes.map((lane) => lane.worker.kill()));
    await Promise.all(lanes.map((lane) => lane.passThrough.close()));
  });
  const settings = {
    directUrl: stack.url,
    token: stack.token,
    lockId,
    occupancyKey,
    wakeUps: !options.poll,
    careless: options.careless,
  };
  for (let i = 1; i <= options.workers; i++) {
    lanes.push(await startLane(`worker-${i}`, settings, stack.url, random));
  }

  say("  starting workers...");
  const ready = await awaitWithin(Promise.all(lanes.map((lane) => lane.worker.ready)), READY_TIMEOUT_MS);
  if (ready === "interrupted") return interruptExitCode();
  if (ready === "timeout") throw new Error(`workers were not ready within ${READY_TIMEOUT_MS} ms`);

  const started = Date.now();
  const deadline = started + options.seconds * 1000;
  for (const lane of lanes) {
    lane.worker.go({ deadline });
    lane.injector.start();
  }
  say(`  ${lanes.length} workers ready; go.`);
  const progress = setInterval(() => say(`  ... ${Math.round((Date.now() - started) / 1000)} s`), 10_000);
  const finished = await awaitWithin(
    Promise.all(lanes.map((lane) => lane.worker.exited)),
    options.seconds * 1000 + FINISH_TIMEOUT_MS,
  );
  clearInterval(progress);
  for (const lane of lanes) lane.injector.stop();
  if (finished === "interrupted") {
    for (const lane of lanes) lane.worker.closeInput();
    say("\nInterrupted: asked the workers to stop.");
  }
  const outcomes = await Promise.all(lanes.map(settle));
  say(`  done after ${((Date.now() - started) / 1000).toFixed(1)} s.\n`);

  const steps = new Map<string, readonly Step[]>(outcomes.map((o) => [o.name, o.report?.steps ?? []]));
  const overlaps = findOverlaps(steps);
  for (const line of renderTable(outcomes, overlaps)) say(`  ${line}`);
  say();
  for (const line of renderTotals(outcomes, overlaps)) say(`  ${line}`);
  const pendingTimers = renderPendingTimers(outcomes);
  if (pendingTimers.length > 0) {
    say("  library timers still pending when the workers reported (an unref'd one never delays the exit):");
    for (const line of pendingTimers) say(`    ${line}`);
  }

  const direct = new Redis({ url: stack.url, token: stack.token, enableTelemetry: false, retry: false });
  const problems = findProblems(outcomes, overlaps, started);
  if (await lockKeyLeft(direct, lockId))
    problems.push("the lock key was still set a lease after the last worker");
  const occupancy = Number((await direct.get<number>(occupancyKey)) ?? 0);
  if (occupancy !== 0) problems.push(`the occupancy counter ended at ${occupancy}, not 0`);
  for (const lane of lanes) {
    const output = lane.worker.output;
    if (output.length > 0) {
      say(`\n${lane.worker.name} printed:`);
      for (const line of output.slice(-20)) say(`    ${line}`);
    }
  }
  say();
  if (problems.length === 0) {
    say("Clean: no overlap, no unhandled rejection, every worker reported and exited on its own.");
  } else {
    say("FAILED:");
    for (const problem of problems) say(`  - ${problem}`);
  }
  if (interrupted.aborted) return interruptExitCode();
  return problems.length === 0 ? 0 : 1;
}

runCli<SoakOptions>({ name: "soak", usage: USAGE, parse: parseOptions, run });
