// Section 6, in a child process started with --expose-gc: one process holding many locks at once,
// each renewed in the background, over ioredis (a cheap transport, so the library is what is stressed).
import { monitorEventLoopDelay } from "node:perf_hooks";
import { Mutex } from "redis-semaphore";
import { Lock } from "../dist/index.js";
import type { RequestCounter } from "../test/support/request-counter";
import { childConfig, report, reportFailure } from "./children";
import { ioredisClient } from "./clients";
import { cpuMs, sleep } from "./clock";
import { countIoredisCommands } from "./taps";

export interface ScaleWorkerConfig {
  readonly redisUrl: string;
  readonly variant: "ours" | "semaphore";
  readonly count: number;
  readonly leaseMs: number;
  readonly intervalMs: number;
  readonly windowMs: number;
  readonly keyBase: string;
  /** Acquisitions in flight at once while taking the locks. */
  readonly concurrency: number;
}

export interface ScaleResult {
  readonly variant: "ours" | "semaphore";
  readonly count: number;
  readonly leaseMs: number;
  readonly intervalMs: number;
  readonly windowMs: number;
  readonly acquired: number;
  readonly acquireAllMs: number;
  /** Heap growth per held lock after GC, bytes (the lock object, its hold and timers). */
  readonly heapPerLockBytes: number;
  readonly rssPerLockBytes: number;
  readonly renewalsPerSecond: number;
  readonly expectedRenewalsPerSecond: number;
  readonly eventLoopDelayMs: { readonly p50: number; readonly p99: number; readonly max: number };
  /** CPU time of the process during the window, as a share of one core. */
  readonly cpuShareOfOneCore: number;
  readonly lostDuringWindow: number;
  readonly releaseAllMs: number;
  readonly released: number;
  /** Renewal commands sent after every lock was released (timers that outlived release). */
  readonly renewalsAfterRelease: number;
  /** Heap left per lock after release, dropping the lock objects and GC: a leak shows here. */
  readonly heapAfterReleasePerLockBytes: number;
}

interface Held {
  acquire(): Promise<boolean>;
  release(): Promise<unknown>;
}

/**
 * Sampling period of the event-loop delay histogram. Node records the whole time between two samples,
 * so the period is subtracted from every figure to leave the delay alone.
 */
const LOOP_RESOLUTION_MS = 5;

const config = childConfig<ScaleWorkerConfig>();
const gc = (globalThis as { gc?: () => void }).gc;

try {
  report({ type: "result", result: await measure(config) });
} catch (error) {
  reportFailure(error);
}

function collect(): NodeJS.MemoryUsage {
  if (!gc) throw new Error("run with --expose-gc");
  for (let index = 0; index < 3; index++) gc();
  return process.memoryUsage();
}

async function inBatches<T>(items: T[], size: number, work: (item: T) => Promise<unknown>): Promise<void> {
  for (let start = 0; start < items.length; start += size) {
    await Promise.all(items.slice(start, start + size).map(work));
  }
}

function renewalCommands({ counts }: RequestCounter): number {
  return (counts.byPath.evalsha ?? 0) + (counts.byPath.eval ?? 0);
}

async function measure(config: ScaleWorkerConfig): Promise<ScaleResult> {
  const commands = countIoredisCommands();
  const redis = ioredisClient(config.redisUrl);
  let lost = 0;
  const create = (index: number): Held => {
    const key = `${config.keyBase}:${config.variant}:${index}`;
    if (config.variant === "ours") {
      const lock = new Lock({
        id: key,
        redis,
        lease: config.leaseMs,
        autoExtend: { interval: config.intervalMs },
        onLost: () => {
          lost += 1;
        },
      });
      return { acquire: () => lock.acquire(), release: () => lock.release() };
    }
    const mutex = new Mutex(redis, key, {
      lockTimeout: config.leaseMs,
      refreshInterval: config.intervalMs,
      onLockLost: () => {
        lost += 1;
      },
    });
    return { acquire: () => mutex.tryAcquire(), release: () => mutex.release() };
  };
  try {
    // Warm up: connection, scripts, and the code paths, so none of it counts as per-lock memory.
    const warm = create(-1);
    await warm.acquire();
    await warm.release();
    const base = collect();

    let locks: Held[] | undefined = Array.from({ length: config.count }, (_, index) => create(index));
    let acquired = 0;
    const acquireStarted = performance.now();
    await inBatches(locks, config.concurrency, async (lock) => {
      if (await lock.acquire()) acquired += 1;
    });
    const acquireAllMs = performance.now() - acquireStarted;
    const held = collect();

    // Let renewals settle into their rhythm, then measure one window.
    await sleep(config.intervalMs);
    const lostBefore = lost;
    const delay = monitorEventLoopDelay({ resolution: LOOP_RESOLUTION_MS });
    const renewalsBefore = renewalCommands(commands);
    const cpuBefore = cpuMs();
    delay.enable();
    await sleep(config.windowMs);
    delay.disable();
    const cpuUsed = cpuMs() - cpuBefore;
    const renewals = renewalCommands(commands) - renewalsBefore;
    const lostDuringWindow = lost - lostBefore;

    let released = 0;
    const releaseStarted = performance.now();
    await inBatches(locks, config.concurrency, async (lock) => {
      if ((await lock.release()) !== false) released += 1;
    });
    const releaseAllMs = performance.now() - releaseStarted;
    const afterRelease = renewalCommands(commands);
    await sleep(config.intervalMs * 1.5);
    const renewalsAfterRelease = renewalCommands(commands) - afterRelease;
    locks = undefined;
    const end = collect();

    const ms = (ns: number) => Math.max(0, Math.round((ns / 1e6 - LOOP_RESOLUTION_MS) * 1000) / 1000);
    return {
      variant: config.variant,
      count: config.count,
      leaseMs: config.leaseMs,
      intervalMs: config.intervalMs,
      windowMs: config.windowMs,
      acquired,
      acquireAllMs: Math.round(acquireAllMs),
      heapPerLockBytes: Math.round((held.heapUsed - base.heapUsed) / config.count),
      rssPerLockBytes: Math.round((held.rss - base.rss) / config.count),
      renewalsPerSecond: Math.round(renewals / (config.windowMs / 1000)),
      expectedRenewalsPerSecond: Math.round(config.count / (config.intervalMs / 1000)),
      eventLoopDelayMs: { p50: ms(delay.percentile(50)), p99: ms(delay.percentile(99)), max: ms(delay.max) },
      cpuShareOfOneCore: Math.round((cpuUsed / config.windowMs) * 1000) / 1000,
      lostDuringWindow,
      releaseAllMs: Math.round(releaseAllMs),
      released,
      renewalsAfterRelease,
      heapAfterReleasePerLockBytes: Math.round((end.heapUsed - base.heapUsed) / config.count),
    };
  } finally {
    redis.disconnect();
  }
}
