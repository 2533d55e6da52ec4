// One contender in `npm run soak`: a process that takes the shared lock with auto-extend over and
// over until the run's deadline, through its own fault-injecting pass-through. While it holds the
// lock it works in small steps and respects the lock: before each step it checks `lock.signal`,
// and a step in progress ends as soon as the signal aborts. Each step is timed on the machine's
// clock and counted in and out of an occupancy counter through a client that bypasses the faults.
// It is started by scripts/soak.ts and writes its report as one JSON line at the end.

import { createHook } from "node:async_hooks";
import { setTimeout as pause } from "node:timers/promises";
import { fileURLToPath } from "node:url";
import { Redis } from "@upstash/redis";
import { enableWakeUps, Lock, LockAcquisitionError, type LockLostError } from "../../src/index";
import { waitForGo, workerConfig } from "../support/workers";
import { type SoakWorkerConfig, type Step, WORKLOAD, type WorkerLine, type WorkerReport } from "./protocol";

const config = workerConfig<SoakWorkerConfig>("scripts/soak.ts");
// `careless`: the control run, no auto-extend, and holders ignore the lock once they have it.
const { name, careless } = config;
const report: WorkerReport = {
  type: "report",
  worker: name,
  holds: 0,
  losses: { taken: 0, expired: 0 },
  onLostCalls: 0,
  acquireFailures: { held: 0, timeout: 0, redisError: 0, other: 0 },
  releases: { released: 0, notHeld: 0, failed: 0 },
  renewalWaits: 0,
  occupancyConflicts: 0,
  steps: [],
  heapUsedBytes: { start: 0, warm: 0, end: 0 },
  unhandledRejections: [],
  pendingLibraryTimers: [],
  errors: [],
};

// Timers the library started and that neither fired nor were cleared yet, by where the library
// asked for them (the first library frame outside clock.ts, which only wraps setTimeout): at the end
// of the run there should be none that keeps the process alive.
const LIBRARY_DIR = fileURLToPath(new URL("../../src/", import.meta.url));
const libraryTimers = new Map<number, { site: string; timer: { hasRef?: () => boolean } }>();
Error.stackTraceLimit = 30;
createHook({
  init(asyncId, type, _trigger, resource) {
    if (type !== "Timeout") return;
    const frames = (new Error().stack ?? "").split("\n").filter((line) => line.includes(LIBRARY_DIR));
    const frame = frames.find((line) => !line.includes(`${LIBRARY_DIR}clock.ts`)) ?? frames[0];
    if (frame) {
      const site = frame.slice(frame.indexOf(LIBRARY_DIR) + LIBRARY_DIR.length).replace(/\)$/, "");
      libraryTimers.set(asyncId, { site, timer: resource as { hasRef?: () => boolean } });
    }
  },
  destroy(asyncId) {
    libraryTimers.delete(asyncId);
  },
}).enable();

// Counted, not fatal: the soak fails if any happened, and the report says what they were.
process.on("unhandledRejection", (reason) => {
  report.unhandledRejections.push(describe(reason));
});

/** Aborted at the run's deadline, or when the parent closes stdin (it stopped, or died). */
const stop = new AbortController();
// Ctrl-C reaches the whole process group: finish the hold, release and report, as for a stop.
for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.on(signal, () => stop.abort(new Error(`stopped by ${signal}`)));
}

function describe(value: unknown): string {
  return value instanceof Error ? `${value.name}: ${value.message}` : String(value);
}

function write(line: WorkerLine): void {
  process.stdout.write(`${JSON.stringify(line)}\n`);
}

function randomBetween([min, max]: readonly [number, number]): number {
  return min + Math.floor(Math.random() * (max - min + 1));
}

/** Heap in use after a full collection (the worker runs with --expose-gc), so growth means retention. */
function heapUsed(): number {
  (globalThis as { gc?: () => void }).gc?.();
  return process.memoryUsage().heapUsed;
}

/** Sleeps, ending early (without throwing) when `signal` aborts. */
async function sleepUnless(ms: number, signal: AbortSignal): Promise<void> {
  await pause(ms, undefined, { signal }).catch(() => undefined);
}

/** One step of work: timed, and counted in and out of the occupancy counter. Cut short by a loss. */
async function step(direct: Redis, occupancyKey: string, signal: AbortSignal): Promise<void> {
  const start = Date.now();
  const inside = await direct.incr(occupancyKey);
  try {
    await sleepUnless(randomBetween(WORKLOAD.stepMs), signal);
  } finally {
    await direct.decr(occupancyKey);
  }
  const end = Date.now();
  report.steps.push([start, end] satisfies Step);
  if (inside > 1) report.occupancyConflicts += 1;
}

/** Works while holding: stops at once on loss, and never starts a step the lease may not cover. */
async function work(lock: Lock, direct: Redis, occupancyKey: string): Promise<void> {
  const signal = careless ? new AbortController().signal : lock.signal;
  const until = Date.now() + randomBetween(WORKLOAD.holdMs);
  let waitingForRenewal = false;
  while (Date.now() < until && !stop.signal.aborted && !signal.aborted) {
    if (!careless && lock.remainingMs < WORKLOAD.stepMs[1] + WORKLOAD.stepSafetyMs) {
      if (!waitingForRenewal) report.renewalWaits += 1;
      waitingForRenewal = true;
      await sleepUnless(5, signal);
      continue;
    }
    waitingForRenewal = false;
    await step(direct, occupancyKey, signal);
  }
  if (lock.signal.aborted) {
    const reason = (lock.signal.reason as LockLostError).reason;
    if (reason === "taken" || reason === "expired") report.losses[reason] += 1;
    else report.errors.push(`a hold ended with an unexpected loss reason: ${reason}`);
  }
}

/**
 * Releases, and classifies a `false`: expected after a loss, or when the lease ran out while the
 * release was on its way (renewals stop when it starts). Otherwise Redis no longer had the key while
 * the local deadline said it was held, which must never happen.
 */
async function release(lock: Lock): Promise<void> {
  const lost = lock.signal.aborted;
  const remainingMs = lock.remainingMs;
  const sentAt = performance.now();
  try {
    if (await lock.release()) {
      report.releases.released += 1;
      return;
    }
  } catch {
    // The pass-through failed the request; the key expires with its lease.
    report.releases.failed += 1;
    return;
  }
  report.releases.notHeld += 1;
  const tookMs = performance.now() - sentAt;
  if (!lost && tookMs < remainingMs) {
    report.errors.push(
      `release found the key gone ${Math.round(tookMs)} ms after it was sent, with ${remainingMs} ms of lease left locally`,
    );
  }
}

/** Tries for the lock once (one acquireOrThrow call). @returns whether it is held now. */
async function acquire(lock: Lock): Promise<boolean> {
  try {
    await lock.acquireOrThrow({
      timeout: WORKLOAD.acquireTimeoutMs,
      signal: stop.signal,
      retry: WORKLOAD.retry,
    });
    return true;
  } catch (error) {
    if (stop.signal.aborted && error === stop.signal.reason) return false;
    if (error instanceof LockAcquisitionError) {
      const field = error.reason === "redis-error" ? "redisError" : error.reason;
      report.acquireFailures[field] += 1;
    } else {
      report.acquireFailures.other += 1;
      report.errors.push(`acquire: ${describe(error)}`);
    }
    return false;
  }
}

async function run(): Promise<void> {
  const { token, occupancyKey } = config;
  // The lock's client retries like a real one would (a little), so dropped replies re-run scripts.
  const faulty = new Redis({
    url: config.lockUrl,
    token,
    enableTelemetry: false,
    retry: { retries: 2, backoff: (retryCount) => 20 * 2 ** retryCount },
  });
  // No retries for the counter: a re-sent INCR would count twice and report an overlap that never was.
  const direct = new Redis({ url: config.directUrl, token, enableTelemetry: false, retry: false });
  // The lock's scripts cross the faults. Its release subscriptions (enableWakeUps: a server-sent
  // events stream per waited-on lock) go straight to the proxy: the pass-through buffers whole
  // responses, so a stream would never get through it, and a waiter would only ever poll. The
  // library opens them on an @upstash/redis client's REST endpoint (`client.baseUrl`, `client.headers`),
  // so the wrapper names the proxy's.
  const lockClient = {
    eval: (script: string, keys: string[], args: (string | number)[]) => faulty.eval(script, keys, args),
    evalsha: (sha1: string, keys: string[], args: (string | number)[]) => faulty.evalsha(sha1, keys, args),
    client: { baseUrl: config.directUrl, headers: { authorization: `Bearer ${token}` } },
  };
  if (config.wakeUps) enableWakeUps(lockClient);
  const lock = new Lock({
    id: config.lockId,
    redis: lockClient,
    lease: WORKLOAD.leaseMs,
    autoExtend: !careless,
    onLost: () => {
      report.onLostCalls += 1;
    },
  });
  const go = waitForGo(() => stop.abort(new Error("stopped by the parent")));
  await direct.ping();
  report.heapUsedBytes.start = heapUsed();
  write({ type: "ready", worker: name });
  const message = await go;
  if (!message) return;
  const runMs = Math.max(0, message.deadline - Date.now());
  const untilDeadline = setTimeout(() => stop.abort(new Error("the run is over")), runMs);
  const warmedUp = setTimeout(
    () => {
      report.heapUsedBytes.warm = heapUsed();
    },
    Math.min(runMs / 4, 10_000),
  );
  try {
    while (!stop.signal.aborted) {
      if (await acquire(lock)) {
        report.holds += 1;
        try {
          await work(lock, direct, occupancyKey);
        } finally {
          await release(lock);
        }
      }
      await sleepUnless(randomBetween(WORKLOAD.thinkMs), stop.signal);
    }
  } finally {
    clearTimeout(untilDeadline);
    clearTimeout(warmedUp);
  }
}

try {
  await run();
} catch (error) {
  report.errors.push(describe(error));
  process.exitCode = 1;
}
// Destroy hooks of cleared timers run a turn of the event loop later: let them, then look.
await new Promise((resolve) => setImmediate(resolve));
await new Promise((resolve) => setImmediate(resolve));
report.pendingLibraryTimers = [...libraryTimers.values()].map(
  ({ site, timer }) => `${site}${timer.hasRef?.() === false ? " (unref'd)" : " (keeps the process alive)"}`,
);
report.heapUsedBytes.end = heapUsed();
write(report);
// No process.exit: the worker must end on its own. A timer or socket left behind would keep it
// alive, and the parent reports that. Stdin is the only handle it keeps on purpose.
process.stdin.destroy();
