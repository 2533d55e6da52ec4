// `npm run demo [-- --seconds N --workers N --poll]`: several processes contend for one lock through
// @upstash/redis, the terminal shows live who holds it and who waits, and a summary checks that
// no two of them were ever inside the critical section at once.
//
// `npm run demo -- --fair`: two groups of processes at the same time, one on a `Lock` and one on a
// `FairLock`, each worker asking again as soon as it released; the summary adds, for each lock,
// how evenly the turns went round (scripts/demo/fairness.ts).
//
// Uses UPSTASH_REDIS_REST_URL / UPSTASH_REDIS_REST_TOKEN when both are set, otherwise a local
// stack started for the run. Whatever it starts it stops, also on Ctrl-C. Exit code: 0 when the
// run was clean, 1 on an overlap or a failed worker, 2 on bad arguments, 130/143 after SIGINT/SIGTERM.

import type { Redis } from "@upstash/redis";
import { type Backend, clientFor, deleteRunKeys, openBackend, type RunKeys, runKeys } from "./demo/backend";
import { measureFairness, renderComparison, renderFairness } from "./demo/fairness";
import { type DemoOptions, parseOptions, USAGE } from "./demo/options";
import {
  type DemoWorkerConfig,
  parseEvent,
  WORKLOADS,
  type WorkerEvent,
  type Workload,
  type WorkloadName,
} from "./demo/protocol";
import {
  findOverlaps,
  overlapCount,
  renderOverlaps,
  renderSummaryTable,
  summarizeAll,
  summarizeWorker,
  workerErrors,
} from "./demo/summary";
import { applyEvent, markExited, markInterrupted, newTrack, type TrackGroup } from "./demo/timeline";
import { liveView, logView, type View } from "./demo/view";
import { interruptExitCode, interrupted, runCli } from "./support/cli";
import { startWorker, type WorkerProcess } from "./support/workers";

/** tsx on two cores compiles each worker in about a second; this only catches a hung start. */
const READY_TIMEOUT_MS = 60_000;
const WORKER_SCRIPT = new URL("./demo-worker.ts", import.meta.url);

const out = process.stdout;
const say = (line = "") => out.write(`${line}\n`);

/** Resolves with the promise's value, or with "interrupted" as soon as the demo is interrupted. */
function unlessInterrupted<T>(promise: Promise<T>): Promise<T | "interrupted"> {
  if (interrupted.aborted) return Promise.resolve("interrupted");
  return Promise.race([
    promise,
    new Promise<"interrupted">((resolve) =>
      interrupted.addEventListener("abort", () => resolve("interrupted"), { once: true }),
    ),
  ]);
}

function withTimeout<T>(promise: Promise<T>, ms: number, message: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(message)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

/** One lock and the workers that contend for it. */
interface Group extends TrackGroup {
  /** "unfair" or "fair" with --fair; its workers are named after it, e.g. "fair-2". */
  label: string;
  fair: boolean;
  keys: RunKeys;
  workers: WorkerProcess[];
}

/** The default run contends for one lock; --fair runs an unfair and a fair lock side by side. */
function planGroups(options: DemoOptions): Group[] {
  const group = (label: string, title: string | undefined, fair: boolean): Group => ({
    label,
    title,
    fair,
    keys: runKeys(),
    tracks: [],
    workers: [],
  });
  if (!options.fair) return [group("worker", undefined, false)];
  return [group("unfair", "Unfair lock (new Lock)", false), group("fair", "Fair lock (new FairLock)", true)];
}

function workloadOf(options: DemoOptions): WorkloadName {
  return options.fair ? "saturated" : "paced";
}

function printHeader(options: DemoOptions, backend: Backend, groups: readonly Group[]): void {
  const workload: Workload = WORKLOADS[workloadOf(options)];
  const tries = `acquire() tries ${workload.attempts}×${workload.delayMs} ms`;
  const hold = `hold it ${workload.holdMs.join("-")} ms, release it`;
  say(`  server: ${backend.description}`);
  let wakeUps = "every worker calls enableWakeUps(redis): a long wait subscribes, a release wakes it";
  if (options.poll) {
    wakeUps = options.fair
      ? "no enableWakeUps (--poll): the Lock's waiters poll; the FairLock enables wake-ups by itself"
      : "no enableWakeUps (--poll): waiters poll every retry.delay";
  }
  say(`  wake-ups: ${wakeUps}`);
  const [only] = groups;
  if (only && groups.length === 1) {
    say(`  lock:   ${only.keys.lockId}  (lease ${workload.leaseMs} ms, ${tries})`);
    say(
      `  each worker, for ${options.seconds} s: think ${workload.thinkMs.join("-")} ms, wait for the lock, ` +
        `${hold}; again`,
    );
    return;
  }
  for (const group of groups) {
    say(
      `  ${`${group.label}:`.padEnd(8)}${group.keys.lockId}  (${group.fair ? "new FairLock" : "new Lock"})`,
    );
  }
  say(`  both:   lease ${workload.leaseMs} ms, ${tries}`);
  say(`  each worker, for ${options.seconds} s: wait for the lock, ${hold}, and at once wait again`);
}

/** How long a worker may take to exit after SIGTERM before it is killed. */
const STOP_GRACE_MS = 2_000;

/**
 * Starts a group's workers (scripts/demo-worker.ts); each reports its events to its own track and
 * to the view.
 */
function startWorkers(options: DemoOptions, backend: Backend, group: Group, view: () => View): void {
  for (let i = 1; i <= options.workers; i++) {
    const track = newTrack(`${group.label}-${i}`);
    group.tracks.push(track);
    const config: DemoWorkerConfig = {
      url: backend.url,
      token: backend.token,
      lockId: group.keys.lockId,
      occupancyKey: group.keys.occupancyKey,
      name: track.name,
      fair: group.fair,
      wakeUps: !options.poll,
      workload: workloadOf(options),
    };
    const worker = startWorker<WorkerEvent>({
      name: track.name,
      script: WORKER_SCRIPT,
      config,
      parse: (line) => {
        const event = parseEvent(line);
        return event?.worker === track.name ? event : undefined;
      },
      isReady: (event) => event.event === "ready",
      onMessage: (event) => {
        // Kept with the output too, so that a worker failing before it is ready explains why.
        if (event.event === "error") worker.output.push(`error: ${event.message}`);
        applyEvent(track, event);
        view().event(track, event);
      },
    });
    group.workers.push(worker);
  }
}

/** Waits for every worker of a group to exit, recording on its track how it ended. */
function awaitExits({ workers, tracks }: Group): Promise<unknown> {
  return Promise.all(
    workers.map(async (worker, i) => {
      const { code } = await worker.exited;
      const track = tracks[i];
      if (track) markExited(track, Date.now(), code === 0);
    }),
  );
}

/** Everything the workers printed besides events, for workers that failed. */
function printWorkerOutput({ workers, tracks }: Group): void {
  workers.forEach((worker, i) => {
    if (tracks[i]?.state !== "failed" || worker.output.length === 0) return;
    say(`\n${worker.name} output:`);
    for (const line of worker.output.slice(-20)) say(`  ${line}`);
  });
}

/**
 * A group's summary table and verdict, under its title; with --fair, also how evenly its turns
 * went round. @returns whether the group's run was clean.
 */
function printSummary(group: Group, options: DemoOptions, origin: number, interrupted: boolean): boolean {
  const { tracks } = group;
  const summaries = tracks.map(summarizeWorker);
  say(`\n${group.title ?? "Summary"}${interrupted ? " (interrupted: partial run)" : ""}:`);
  for (const line of renderSummaryTable(summaries, summarizeAll(tracks))) say(`  ${line}`);
  if (options.fair) for (const line of renderFairness(measureFairness(tracks))) say(`  ${line}`);
  const report = findOverlaps(tracks);
  say();
  for (const line of renderOverlaps(report, origin)) say(line);
  const stopped = summaries.reduce((sum, s) => sum + s.stoppedWaiting, 0);
  if (stopped > 0)
    say(`  (${stopped} waits ended unfinished when the run was over; counted as waits, not give-ups)`);
  const lost = summaries.reduce((sum, s) => sum + s.lostReleases, 0);
  if (lost > 0) say(`  WARNING: ${lost} release() calls returned false: the lock was no longer theirs`);
  const failed = tracks.filter((track) => track.state === "failed").map((track) => track.name);
  if (failed.length > 0) say(`  FAILED workers: ${failed.join(", ")}`);
  const errors = workerErrors(tracks);
  if (errors.length > 0)
    say(`\nWorker errors${interrupted ? " (some may come from the interrupt itself)" : ""}:`);
  for (const line of errors) say(`  ${line}`);
  return overlapCount(report) === 0 && lost === 0 && failed.length === 0;
}

/** With --fair: both locks' turns in one table, the point of the comparison. */
function printComparison(groups: readonly Group[], options: DemoOptions, interrupted: boolean): void {
  say(
    `\nFair against unfair: ${options.workers} workers per lock for ${options.seconds} s, ` +
      `each asking again as soon as it released${interrupted ? " (interrupted: partial run)" : ""}:`,
  );
  const locks = groups.map((group) => ({
    label: `${group.label} lock`,
    fairness: measureFairness(group.tracks),
  }));
  for (const line of renderComparison(locks)) say(`  ${line}`);
}

/**
 * Deletes a group's keys and says whether the lock was left behind, a bug after a full run.
 * `whose` names the keys' owner in the message: "the run's", or "the fair lock's".
 */
async function cleanUpKeys(
  redis: Redis,
  keys: RunKeys,
  whose: string,
  interrupted: boolean,
): Promise<boolean> {
  const { lockLeft, deleted } = await deleteRunKeys(redis, keys);
  let lock = "the lock key was already gone";
  if (lockLeft)
    lock = interrupted
      ? "the lock key was still set by a stopped worker"
      : "WARNING: the lock key was still set";
  say(`Deleted ${whose} ${deleted} keys; ${lock}.`);
  return !lockLeft;
}

function interruptedEarly(): number {
  say("\nInterrupted before the run began.");
  return interruptExitCode();
}

/** Runs the demo; `cleanups` collects what must be stopped, in order, whatever happens. */
async function run(options: DemoOptions, cleanups: Array<() => Promise<unknown>>): Promise<number> {
  if (options.fair) {
    say(
      `Lock demo, fair against unfair: two groups of ${options.workers} worker processes contend at the same time, ` +
        "each group for its own @upstash/lock through @upstash/redis.",
    );
  } else {
    say(
      `Lock demo: ${options.workers} worker processes contend for one @upstash/lock through @upstash/redis.`,
    );
  }
  say("  starting...");
  const backend = await openBackend(process.env);
  cleanups.push(async () => {
    await backend.close();
    if (backend.throwaway) say("Stopped the local stack.");
  });
  const redis = clientFor(backend);
  const groups = planGroups(options);
  printHeader(options, backend, groups);
  const reachable = redis.ping().catch((error: unknown) => {
    throw new Error(`cannot reach ${backend.url}: ${error instanceof Error ? error.message : String(error)}`);
  });
  if ((await unlessInterrupted(reachable)) === "interrupted") return interruptedEarly();

  const viewOptions = { groups, out };
  const view: View = out.isTTY ? liveView(viewOptions) : logView(viewOptions);
  for (const group of groups) startWorkers(options, backend, group, () => view);
  const workers = groups.flatMap((group) => group.workers);
  const tracks = groups.flatMap((group) => group.tracks);
  // Stop the workers before the server they talk to, and only then delete their keys.
  cleanups.push(() => Promise.all(workers.map((worker) => worker.stop(STOP_GRACE_MS))));
  const exits = Promise.all(groups.map(awaitExits));
  const ready = withTimeout(
    Promise.all(workers.map((w) => w.ready)),
    READY_TIMEOUT_MS,
    "workers did not start",
  );
  if ((await unlessInterrupted(ready)) === "interrupted") return interruptedEarly();

  const origin = Date.now();
  say(`  ${workers.length} workers ready; go.\n`);
  view.start(origin, options.seconds);
  for (const worker of workers) worker.go({ deadline: origin + options.seconds * 1000 });
  const interrupted = (await unlessInterrupted(exits)) === "interrupted";
  const stoppedAt = interrupted ? Date.now() : undefined;
  if (stoppedAt !== undefined) {
    await Promise.all(workers.map((worker) => worker.stop(STOP_GRACE_MS)));
    for (const track of tracks) markInterrupted(track, stoppedAt);
  }
  view.finish(stoppedAt);
  if (interrupted) say("\nInterrupted: stopped the workers.");
  for (const group of groups) printWorkerOutput(group);
  let clean = true;
  for (const group of groups) clean = printSummary(group, options, origin, interrupted) && clean;
  if (options.fair) printComparison(groups, options, interrupted);
  // After an interrupt a throwaway server is about to go, keys and all: nothing to check there.
  let keysClean = true;
  if (!(interrupted && backend.throwaway)) {
    say();
    for (const group of groups) {
      const whose = options.fair ? `the ${group.label} lock's` : "the run's";
      keysClean = (await cleanUpKeys(redis, group.keys, whose, interrupted)) && keysClean;
    }
  }
  if (interrupted) return interruptExitCode();
  return clean && keysClean ? 0 : 1;
}

runCli<DemoOptions>({ name: "demo", usage: USAGE, parse: parseOptions, run });
