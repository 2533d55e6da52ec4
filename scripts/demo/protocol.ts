// What the demo's parent and its worker processes say to each other. Workers write one JSON
// object per line on stdout; the parent writes one "go" line on each worker's stdin (see
// scripts/support/workers.ts).

/** What the parent tells each worker (see `workerConfig` in scripts/support/workers.ts). */
export interface DemoWorkerConfig {
  readonly url: string;
  readonly token: string;
  readonly lockId: string;
  readonly occupancyKey: string;
  readonly name: string;
  /** A FairLock, or a Lock. */
  readonly fair: boolean;
  /** Whether the worker calls `enableWakeUps` for its client (not with --poll). */
  readonly wakeUps: boolean;
  /** A key of {@link WORKLOADS}. */
  readonly workload: WorkloadName;
}

/** How the lock is used by every worker; the parent prints it, the worker applies it. */
export interface Workload {
  /** A worker "thinks" (does unrelated work) this long between critical sections, in ms. */
  readonly thinkMs: readonly [number, number];
  /** How long a worker holds the lock once it has it, in ms. */
  readonly holdMs: readonly [number, number];
  /** Far longer than any hold, so a lease never runs out inside a critical section. */
  readonly leaseMs: number;
  /** acquire() tries up to this many times... */
  readonly attempts: number;
  /** ...this many ms apart: a worker gives up after waiting about attempts × delayMs. */
  readonly delayMs: number;
}

export const WORKLOADS = {
  /**
   * The default run: workers think between rounds, so the lock is contended, but not always; a
   * worker gives up after about 2.5 s.
   */
  paced: { thinkMs: [50, 300], holdMs: [100, 400], leaseMs: 5_000, attempts: 50, delayMs: 50 },
  /**
   * The --fair run: each worker asks again as soon as it released, so the lock is never free for
   * long and only the order in which the lock serves its waiters decides who gets the next turn.
   * Waits last up to the run's end (a minute at most): a waiter that gave up would lose its place
   * in the fair queue, and a starved one shows as a long wait.
   */
  saturated: { thinkMs: [0, 0], holdMs: [100, 200], leaseMs: 5_000, attempts: 1_200, delayMs: 50 },
} as const satisfies Record<string, Workload>;

export type WorkloadName = keyof typeof WORKLOADS;

export function isWorkloadName(name: string): name is WorkloadName {
  return Object.hasOwn(WORKLOADS, name);
}

interface Base {
  worker: string;
  /** Wall-clock ms (Date.now()) in the worker when the event happened. */
  t: number;
}

/** Connected to Redis and waiting for the parent's go. */
export interface ReadyEvent extends Base {
  event: "ready";
}

/** About to call acquire(). */
export interface WaitingEvent extends Base {
  event: "waiting";
}

/** acquire() resolved true; `t` is taken right after it resolved. */
export interface AcquiredEvent extends Base {
  event: "acquired";
  waitedMs: number;
}

/** The critical section is over and release() has returned. */
export interface ReleasedEvent extends Base {
  event: "released";
  /** The critical section proper: right after acquire() resolved... */
  heldFrom: number;
  /** ...to right before release() was called. The lock was held for at least this interval. */
  heldTo: number;
  /** What release() returned: false would mean the lock was no longer ours. */
  released: boolean;
  /** The most workers the Redis occupancy counter saw inside a critical section; 1 if exclusive. */
  occupancy: number;
}

/** acquire() resolved false: another worker kept the lock through every attempt. */
export interface GaveUpEvent extends Base {
  event: "gave-up";
  waitedMs: number;
  /** True when the worker tried fewer times than usual because the run was ending. */
  cutShort: boolean;
}

/** The worker stopped early because of an error; it exits non-zero right after. */
export interface ErrorEvent extends Base {
  event: "error";
  message: string;
}

/** The worker is finished and about to exit 0. */
export interface DoneEvent extends Base {
  event: "done";
  /** True when it stopped because it was told to (SIGINT, SIGTERM, stdin closed). */
  interrupted: boolean;
}

export type WorkerEvent =
  | ReadyEvent
  | WaitingEvent
  | AcquiredEvent
  | ReleasedEvent
  | GaveUpEvent
  | ErrorEvent
  | DoneEvent;

const EVENT_NAMES = new Set<string>(["ready", "waiting", "acquired", "released", "gave-up", "error", "done"]);

/**
 * Reads one line of worker output. Returns undefined for anything that is not an event, such as
 * a warning some library printed, so the parent can show it as plain output instead.
 */
export function parseEvent(line: string): WorkerEvent | undefined {
  if (!line.startsWith("{")) return undefined;
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    return undefined;
  }
  if (typeof value !== "object" || value === null) return undefined;
  const { worker, event, t } = value as Record<string, unknown>;
  if (typeof worker !== "string" || typeof t !== "number") return undefined;
  if (typeof event !== "string" || !EVENT_NAMES.has(event)) return undefined;
  // Both ends are this file's code, so the fields beyond these follow from `event`.
  return value as WorkerEvent;
}

/** One event as the line a worker writes. */
export function formatEvent(event: WorkerEvent): string {
  return `${JSON.stringify(event)}\n`;
}
