// One contender in `npm run chaos`: a process that acquires its scenario's lock over and over until
// the run's deadline, with random leases, timeouts, aborts and hold lengths, and after a failed
// acquire() often tries again at once with the same uuid. While the library says it holds, it asks
// Redis directly, again and again, whether its token still holds (the ownership oracle); it
// reports every hold, and every contradiction, to the parent as it happens. Started by
// scripts/chaos.ts.

import { setTimeout as pause } from "node:timers/promises";
import type { LockLostError } from "../../src/index";
import { between as draw, seededRandom } from "../soak/faults";
import { waitForGo, workerConfig } from "../support/workers";
import { type Attempt, contenderFor, type Holding } from "./contender";
import { oracleFor } from "./oracle";
import {
  type ChaosWorkerConfig,
  emptyTally,
  type ParentLine,
  WORKLOAD,
  type WorkerLine,
  type WorkerViolationKind,
} from "./protocol";
import { StallWatch } from "./stall-watch";
import { wire } from "./wiring";
import { within } from "./within";

const config = workerConfig<ChaosWorkerConfig>("scripts/chaos.ts");
const random = seededRandom(config.seed);
const tally = emptyTally();
const current = config.library === "current";
// Where faults cannot lose a request, nothing of a round may stay in Redis once it ended.
const checkLeftovers = current && !config.scenario.lossyWire;

const write = (line: WorkerLine) => process.stdout.write(`${JSON.stringify(line)}\n`);
let rounds = 0;
const violation = (kind: WorkerViolationKind, detail: string, round: number | null = rounds || null) =>
  write({ type: "violation", kind, detail, round });
const between = (range: readonly [number, number]) => draw(random, range);
const describe = (value: unknown) =>
  value instanceof Error ? `${value.name}: ${value.message}` : String(value);
const ms = (value: number) => `${Math.round(value)} ms`;

process.on("unhandledRejection", (reason) => violation("unhandled-rejection", describe(reason)));
// The library warns once per lock about leases too short for the round trip; with 50 ms leases on a
// loaded machine that is expected. Counted (the worker runs with --no-warnings).
process.on("warning", (warning) => {
  if (warning.name === "UpstashLockWarning") tally.warnings += 1;
  else process.stderr.write(`${warning.name}: ${warning.message}\n`);
});

const stop = new AbortController();
const stalls = new StallWatch();
const wiring = wire(config);
const contender = contenderFor(config, wiring);
const oracle = oracleFor(config, wiring.probes);
let holds = 0;
let probing = false;

/** A busy loop: the event loop stalls, as in a long synchronous computation or a GC pause. */
function stall(ms: number): void {
  const until = performance.now() + ms;
  while (performance.now() < until) {
    // Spinning on purpose.
  }
}

function onParentLine(message: unknown): void {
  const line = message as ParentLine;
  if (line.type === "stall") stall(line.ms);
}

/** One round of a worker: one token, one or two acquire() calls, perhaps a hold. */
interface Round {
  readonly token: string;
  /** Monotonic ms of the latest deadline the library gave, read while it said held (0 before). */
  deadline: number;
  /** What the round's calls were, for a violation's report. */
  readonly story: string[];
}

const told = (round: Round) => `(${round.story.join("; ")})`;

/**
 * One ownership probe. It counts against the library only when it was sent and answered while the
 * library said held: the library claimed the hold for that whole span, and Redis answered at some
 * moment within it. An answer that comes once the library stopped saying held contradicts nothing.
 */
async function probe(holding: Holding, round: Round): Promise<void> {
  // One probe in flight at a time: a frozen member answers nothing until it thaws.
  if (probing) return;
  const sentAt = performance.now();
  const remaining = holding.remainingMs();
  if (remaining <= 0) return;
  tally.probes.sent += 1;
  probing = true;
  const asking = oracle.ask(round.token).finally(() => {
    probing = false;
  });
  const verdict = await within(asking, remaining, "deadline" as const);
  if (verdict === "deadline" || verdict === undefined) {
    tally.probes.unanswered += 1;
    return;
  }
  if (!verdict.contradicts) return;
  const answeredAt = performance.now();
  const left = holding.remainingMs();
  if (left <= 0) {
    tally.probes.late += 1;
    return;
  }
  tally.probes.contradicted += 1;
  violation(
    "probe",
    `sent with ${ms(remaining)} of the hold left, answered ${ms(answeredAt - sentAt)} later with ` +
      `${ms(left)} left: ${verdict.detail} ${told(round)}`,
  );
}

/** Holds until the planned end, the deadline or a loss, probing all along; then releases. */
async function hold(holding: Holding, round: Round, calledAt: number): Promise<void> {
  holds += 1;
  const hold = holds;
  const start = Date.now();
  const first = holding.remainingMs();
  // `until` is a wall-clock deadline: Date.now() and remainingMs read together.
  let until = start + first;
  round.deadline = performance.now() + first;
  write({ type: "hold", hold, start, until, calledAt, fence: holding.fencingToken ?? null });
  write({ type: "state", state: "holding" });
  const plannedEnd = performance.now() + between(WORKLOAD.holdMs);
  while (!stop.signal.aborted && performance.now() < plannedEnd) {
    const remaining = holding.remainingMs();
    if (remaining <= 0) break;
    until = Date.now() + remaining;
    round.deadline = performance.now() + remaining;
    await probe(holding, round);
    await pause(between(WORKLOAD.probeGapMs));
  }
  // The hold ended here, or at its last known deadline if that came first (a stall, a SIGSTOP).
  write({ type: "unhold", hold, end: Math.min(Date.now(), until) });
  try {
    if (await holding.release()) tally.releases.released += 1;
    else tally.releases.notHeld += 1;
  } catch {
    tally.releases.failed += 1;
  }
}

/** One acquire() call with random choices; checks that it settles by its timeout or its abort. */
async function acquireOnce(round: Round, other: boolean) {
  const lease = between(WORKLOAD.leaseMs);
  const timeout = between(WORKLOAD.timeoutMs);
  const abortAfter = random() < WORKLOAD.abortShare ? between([5, timeout]) : undefined;
  const aborting = abortAfter === undefined ? undefined : new AbortController();
  const abortTimer =
    aborting && setTimeout(() => aborting.abort(new Error("aborted by the worker")), abortAfter);
  const autoExtend = random() < WORKLOAD.autoExtendShare;
  const fencing = config.scenario.fencing && random() < WORKLOAD.fencingShare;
  const attempt: Attempt = {
    uuid: round.token,
    lease,
    timeout,
    signal: aborting?.signal,
    autoExtend,
    fencing,
    other,
    onLost: (error: LockLostError) => {
      if (error.reason === "taken" || error.reason === "expired") tally.losses[error.reason] += 1;
      const early = round.deadline - performance.now();
      // Redis said "not held" before its answer arrived, so before a deadline the library had
      // given: the key (on a quorum, a majority's) went before the lease that set it ran out.
      if (error.reason === "taken" && early > 0) {
        violation(
          "lost-early",
          `the library reported the lock taken with ${ms(early)} of its deadline left ${told(round)}`,
        );
      }
    },
  };
  tally.acquireCalls += 1;
  write({ type: "state", state: "waiting" });
  const calledAt = Date.now();
  const started = performance.now();
  const result = await contender.acquire(attempt);
  const settled = performance.now();
  clearTimeout(abortTimer);
  round.story.push(
    `${round.story.length === 0 ? "" : `same uuid${other ? " on another instance" : ""}, `}` +
      `lease ${lease} ms${autoExtend ? " auto-extended" : ""}${fencing ? " fenced" : ""}, timeout ${timeout} ms` +
      `${abortAfter === undefined ? "" : `, abort at ${abortAfter} ms`}: ` +
      `${typeof result === "string" ? result : "acquired"} after ${ms(settled - started)}`,
  );
  const limit = Math.min(timeout, abortAfter ?? timeout);
  const stalled = stalls.stalledBetween(started, settled);
  if (current && settled - started - stalled > limit + WORKLOAD.overrunMarginMs) {
    violation(
      "overrun",
      `acquire() settled ${ms(settled - started)} after its call (${ms(stalled)} of it stalled), ` +
        `past its limit of ${limit} ms ${told(round)}`,
    );
  }
  if (typeof result === "string") {
    tally.failed[result === "redis-error" ? "redisError" : result] += 1;
    write({ type: "state", state: "idle" });
  } else tally.acquired += 1;
  return { result, calledAt };
}

/** Acquire (perhaps twice with one uuid), hold, release; then, where it holds, nothing may be left. */
async function playRound(): Promise<void> {
  rounds += 1;
  const round: Round = { token: crypto.randomUUID(), deadline: 0, story: [] };
  let { result, calledAt } = await acquireOnce(round, false);
  // The same uuid again right after a failure: the failed call's late tries are undone in the
  // background meanwhile, and must not undo this one's grant.
  if (typeof result === "string" && !stop.signal.aborted && random() < WORKLOAD.sameUuidShare) {
    tally.sameUuid += 1;
    ({ result, calledAt } = await acquireOnce(round, random() < 0.5));
  }
  if (typeof result !== "string") {
    await hold(result, round, calledAt);
    write({ type: "state", state: "idle" });
  }
  if (!checkLeftovers) return;
  const settled = within(
    contender.pending().then(() => true),
    WORKLOAD.pendingLimitMs,
    false,
  );
  if (!(await settled)) {
    tally.pendingSlow += 1;
    return;
  }
  const left = await oracle.leftovers(round.token, 1_000);
  if (left.length > 0) {
    violation("left-behind", `after the round and its pending work: ${left.join(", ")} ${told(round)}`);
  }
}

async function run(): Promise<void> {
  const go = waitForGo(() => stop.abort(new Error("stopped by the parent")), onParentLine);
  await Promise.all(wiring.probes.map((probe) => probe.ping()));
  write({ type: "ready" });
  const message = await go;
  if (!message) return;
  const untilDeadline = setTimeout(
    () => stop.abort(new Error("the run is over")),
    message.deadline - Date.now(),
  );
  const tallies = setInterval(
    () => write({ type: "tally", tally: { ...tally, stallsSeen: stalls.seen } }),
    500,
  );
  try {
    while (!stop.signal.aborted) {
      await playRound();
      await pause(between(WORKLOAD.thinkMs));
    }
  } finally {
    clearTimeout(untilDeadline);
    clearInterval(tallies);
  }
}

try {
  await run();
} catch (error) {
  process.stderr.write(`worker failed: ${error instanceof Error ? error.stack : String(error)}\n`);
  process.exitCode = 1;
}
stalls.stop();
await within(contender.pending(), WORKLOAD.pendingLimitMs, undefined);
await wiring.close();
write({ type: "done", tally: { ...tally, stallsSeen: stalls.seen } });
// No process.exit: the worker must end by itself. A timer or socket left behind would keep it
// alive, and the parent counts that as a violation.
process.stdin.destroy();
