// One contender in `npm run demo`: a separate process that takes the shared lock through
// @upstash/redis over and over until the run's deadline, and reports each step to the parent
// as a JSON line on stdout (see scripts/demo/protocol.ts). It is started by scripts/demo.ts, which
// says which lock (a FairLock or a Lock) and which workload.

import { setTimeout as pause } from "node:timers/promises";
import { Redis } from "@upstash/redis";
import { enableWakeUps, FairLock, Lock } from "../src/index";
import {
  type DemoWorkerConfig,
  formatEvent,
  isWorkloadName,
  WORKLOADS,
  type WorkerEvent,
  type Workload,
} from "./demo/protocol";
import { waitForGo, workerConfig } from "./support/workers";

type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;

type WorkerConfig = Omit<DemoWorkerConfig, "workload"> & { readonly workload: Workload };

/** What the worker is doing, so that a stop request knows whether a lock must be released first. */
let phase: "starting" | "thinking" | "acquiring" | "holding" | "finished" = "starting";
/** Aborted when the parent asks the worker to stop (SIGINT, SIGTERM, or its stdin closing). */
const stop = new AbortController();

function readConfig(): WorkerConfig {
  const config = workerConfig<DemoWorkerConfig>("scripts/demo.ts");
  if (!isWorkloadName(config.workload)) throw new Error(`no workload is named ${config.workload}`);
  return { ...config, workload: WORKLOADS[config.workload] };
}

function emitter(name: string) {
  return (event: DistributiveOmit<WorkerEvent, "worker" | "t">, t = Date.now()): void => {
    process.stdout.write(formatEvent({ worker: name, t, ...event } as WorkerEvent));
  };
}
type Emit = ReturnType<typeof emitter>;

function randomBetween([min, max]: readonly [number, number]): number {
  return min + Math.floor(Math.random() * (max - min + 1));
}

/** Sleeps `ms`; resolves false instead when the worker is told to stop meanwhile. */
async function sleepUnlessStopped(ms: number): Promise<boolean> {
  try {
    await pause(ms, undefined, { signal: stop.signal });
    return true;
  } catch {
    return false;
  }
}

/**
 * Stops the worker. Outside a critical section it exits at once: an acquire() still in flight
 * can at worst leave the key until its lease ends, and the parent deletes the run's keys anyway.
 * Inside one, the hold is cut short so the lock is released before exiting.
 */
function requestStop(): void {
  stop.abort();
  if (phase === "holding" || phase === "finished") return;
  process.exit(0);
}

/**
 * The critical section. The shared counter counts the workers inside a critical section right
 * now; it is checked through Redis itself, independently of anyone's clock. A worker that came
 * and went entirely within our section is not seen here, but the parent's time check sees it.
 * @returns the highest occupancy seen: 1 when this worker was alone, as the lock promises.
 */
async function criticalSection(counter: Redis, key: string, holdMs: number): Promise<number> {
  const entered = await counter.incr(key);
  await sleepUnlessStopped(holdMs);
  const left = await counter.decr(key);
  // Anyone who entered after us and has not left yet is still counted when we decrement.
  return Math.max(entered, left + 1);
}

/** How many attempts fit before the deadline, so no worker is still waiting long after it. */
function attemptsBefore(workload: Workload, deadline: number): number {
  const remaining = Math.max(0, deadline - Date.now());
  return Math.min(workload.attempts, 1 + Math.floor(remaining / workload.delayMs));
}

/** One round: wait for the lock, hold it for a while, release it. */
async function round(lock: Lock, counter: Redis, config: WorkerConfig, deadline: number, emit: Emit) {
  const { workload } = config;
  const waitStart = Date.now();
  emit({ event: "waiting" }, waitStart);
  const attempts = attemptsBefore(workload, deadline);
  phase = "acquiring";
  const acquired = await lock.acquire({ retry: { attempts, delay: workload.delayMs } });
  const heldFrom = Date.now();
  if (!acquired) {
    phase = "thinking";
    const cutShort = attempts < workload.attempts;
    emit({ event: "gave-up", waitedMs: heldFrom - waitStart, cutShort }, heldFrom);
    return;
  }
  phase = "holding";
  emit({ event: "acquired", waitedMs: heldFrom - waitStart }, heldFrom);
  let occupancy: number;
  try {
    occupancy = await criticalSection(counter, config.occupancyKey, randomBetween(workload.holdMs));
  } catch (error) {
    // Do not leave the lock held for a whole lease just because the counter failed.
    await lock.release().catch(() => false);
    throw error;
  }
  const heldTo = Date.now();
  const released = await lock.release();
  phase = "thinking";
  emit({ event: "released", heldFrom, heldTo, released, occupancy });
}

async function run(config: WorkerConfig, emit: Emit): Promise<void> {
  const redis = new Redis({ url: config.url, token: config.token, enableTelemetry: false });
  // No client retries for the counter: an INCR retried after a lost reply would count twice and
  // report an overlap that never happened. The lock itself is safe under retries.
  const counter = new Redis({ url: config.url, token: config.token, enableTelemetry: false, retry: false });
  const go = waitForGo(requestStop);
  // Connect before saying ready, so start-up cost does not count as waiting for the lock.
  await redis.ping();
  emit({ event: "ready" });
  const message = await go;
  if (!message) return;
  phase = "thinking";
  // Wake-ups are opt-in per client: the demo enables them unless told to poll (--poll).
  if (config.wakeUps) enableWakeUps(redis);
  const options = { id: config.lockId, redis, lease: config.workload.leaseMs };
  const lock = config.fair ? new FairLock(options) : new Lock(options);
  while (!stop.signal.aborted && Date.now() < message.deadline) {
    // Without thinking, the next round starts right after the release, with no timer in between.
    const think = randomBetween(config.workload.thinkMs);
    if (think > 0 && !(await sleepUnlessStopped(think))) break;
    if (Date.now() >= message.deadline) break;
    await round(lock, counter, config, message.deadline, emit);
  }
  // A wait cut short by the deadline leaves a fair queue in the background; exiting first would
  // leave this waiter in line, and the last release would hand the lock to it for nothing.
  await lock.pending;
}

async function main(): Promise<number> {
  const config = readConfig();
  const emit = emitter(config.name);
  for (const signal of ["SIGINT", "SIGTERM"] as const) process.on(signal, requestStop);
  // A closed stdout means the parent is gone: nobody is left to report to.
  process.stdout.on("error", requestStop);
  try {
    await run(config, emit);
    phase = "finished";
    emit({ event: "done", interrupted: stop.signal.aborted });
    return 0;
  } catch (error) {
    phase = "finished";
    emit({ event: "error", message: error instanceof Error ? error.message : String(error) });
    return 1;
  }
}

// Exit explicitly: stdin and the HTTP client's idle sockets would otherwise keep the process up.
main().then((code) => process.exit(code));
