// What the soak's parent and its worker processes say to each other. A worker writes one JSON
// object per line on stdout ("ready", then one "report" at the end); the parent writes one "go"
// line on the worker's stdin and closes it to ask for an early stop (see scripts/support/workers.ts).

/** What the parent tells each worker (see `workerConfig` in scripts/support/workers.ts). */
export interface SoakWorkerConfig {
  readonly name: string;
  /** The worker's own fault-injecting pass-through: the lock's requests go there. */
  readonly lockUrl: string;
  /** The proxy itself, never faulted: for the occupancy counter and the lock's subscriptions. */
  readonly directUrl: string;
  readonly token: string;
  readonly lockId: string;
  readonly occupancyKey: string;
  /** Whether the worker calls `enableWakeUps` for the lock's client (not with --poll). */
  readonly wakeUps: boolean;
  /** No auto-extend, and the holder ignores its signal and lease: the control run, which must see overlaps. */
  readonly careless: boolean;
}

/** How every worker uses the lock; the parent prints it, the worker applies it. */
export const WORKLOAD = {
  /** Short, so that faults make leases run out and auto-extend has to work. */
  leaseMs: 500,
  /** One acquire() waits at most this long (its `timeout`). */
  acquireTimeoutMs: 2_000,
  retry: { delay: 20, backoff: "exponential", maxDelay: 200, jitter: 0.5 },
  /** A holder means to work this long, in small steps; longer than the lease on purpose. */
  holdMs: [50, 1_000],
  /** Each step of the work, in ms. */
  stepMs: [5, 20],
  /**
   * A step starts only with at least this much more than its own length left on the lease: the
   * signal says a lease is gone, this keeps a step from outliving one that is about to go.
   */
  stepSafetyMs: 150,
  /** Pause between two holds of one worker, in ms. */
  thinkMs: [0, 100],
} as const;

/** One step of a holder's work: [start, end] in wall-clock ms (Date.now()), shared by all workers. */
export type Step = readonly [start: number, end: number];

/** Everything one worker saw, sent once at the end. */
export interface WorkerReport {
  type: "report";
  worker: string;
  holds: number;
  /** Holds that ended because the lock was lost, by the reason on `lock.signal`. */
  losses: { taken: number; expired: number };
  /** Calls of `onLost`: must equal the losses. */
  onLostCalls: number;
  acquireFailures: { held: number; timeout: number; redisError: number; other: number };
  /** `notHeld`: release() answered false, after a loss or when the lease ran out on the way. */
  releases: { released: number; notHeld: number; failed: number };
  /** Times a holder paused its work because a renewal was late (little lease left). */
  renewalWaits: number;
  /** Steps whose occupancy INCR found another holder inside. */
  occupancyConflicts: number;
  steps: Step[];
  /** After a full GC: before the run, once warmed up (a quarter of the run, at most 10 s in), at the end. */
  heapUsedBytes: { start: number; warm: number; end: number };
  unhandledRejections: string[];
  /** Timers started by the library still pending when the worker reported, by where they were started. */
  pendingLibraryTimers: string[];
  /** Unexpected errors (anything but a lock that was lost or not acquired). */
  errors: string[];
}

/** Lines a worker writes. */
export type WorkerLine = { type: "ready"; worker: string } | WorkerReport;

/** Reads one line of worker output; undefined for anything that is not a protocol line. */
export function parseWorkerLine(line: string): WorkerLine | undefined {
  if (!line.startsWith("{")) return undefined;
  try {
    const value = JSON.parse(line) as { type?: unknown };
    return value.type === "ready" || value.type === "report" ? (value as WorkerLine) : undefined;
  } catch {
    return undefined;
  }
}
