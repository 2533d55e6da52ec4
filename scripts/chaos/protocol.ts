// What the chaos run's parent and its worker processes say to each other (the transport is
// scripts/support/workers.ts). A worker streams what it sees as it happens, one JSON object per
// line, so that a worker the parent kills has already told it about its holds and violations.

import type { Scenario } from "./scenarios";

/** How a worker reaches one Redis member. */
export interface MemberEndpoint {
  /** Where the lock's HTTP requests go: a pass-through (faults) or the proxy itself. */
  readonly restUrl: string;
  /** The proxy itself, never faulted: for wake-up subscriptions (a pass-through buffers whole replies). */
  readonly proxyUrl: string;
  readonly token: string;
  /** The redis-server's port on 127.0.0.1: for ioredis locks, and for every ownership probe. */
  readonly redisPort: number;
}

/** What the parent tells each worker (see `workerConfig` in scripts/support/workers.ts). */
export interface ChaosWorkerConfig {
  readonly name: string;
  /** "0.2.1": @upstash/lock 0.2.1 on the same key, over @upstash/redis. */
  readonly library: "current" | "0.2.1";
  readonly scenario: Scenario;
  readonly lockId: string;
  readonly members: readonly MemberEndpoint[];
  /** Seeds the worker's own choices: leases, timeouts, aborts, hold lengths. */
  readonly seed: number;
}

/** How every worker uses its lock; the parent prints it, the worker applies it. */
export const WORKLOAD = {
  /** Each acquisition draws its lease from here: short, so that faults outlast leases. */
  leaseMs: [50, 300],
  /** Each acquire() call draws its `timeout`. */
  timeoutMs: [50, 1_500],
  /** Share of acquire() calls that also get a signal, aborted somewhere within the timeout. */
  abortShare: 0.25,
  /** Share of holds with auto-extend; the others end when their lease does, if not before. */
  autoExtendShare: 0.6,
  /**
   * Share of acquire() calls that ask for a fencing token, where the lock has them. Not all: a
   * fair waiter takes a lock handed to it by a release without a request only when unfenced.
   */
  fencingShare: 0.5,
  /** After a failed acquire(), the share that tries again at once with the same uuid. */
  sameUuidShare: 0.5,
  /** How long a holder means to hold, in ms: often longer than its lease. */
  holdMs: [5, 400],
  /** Pause between an ownership probe's answer and the next probe, in ms. */
  probeGapMs: [2, 15],
  /** Pause between two rounds of one worker, in ms. */
  thinkMs: [0, 60],
  retry: { delay: 15, backoff: "exponential", maxDelay: 150, jitter: 0.5 },
  /** An acquire() that settles later than its timeout (or its abort) by more than this, after
   * taking off the time the worker's event loop was seen stalled, is a violation. */
  overrunMarginMs: 75,
  /** How long a worker waits for its lock's `pending` before the left-behind check (skipped after). */
  pendingLimitMs: 3_000,
} as const;

/** Ownership probes that contradicted the library, by when they were answered. */
export interface ProbeCounts {
  sent: number;
  /** Redis said another token (or none) while the library still said held: violations. */
  contradicted: number;
  /** Redis said another token, but the answer came when the library no longer said held. */
  late: number;
  /** No answer (a frozen member) before the library stopped saying held. */
  unanswered: number;
}

/** A worker's counters, sent now and then and at the end (the parent keeps the last). */
export interface Tally {
  acquireCalls: number;
  acquired: number;
  failed: { held: number; timeout: number; redisError: number; aborted: number };
  /** acquire() calls made with the uuid of the call that just failed. */
  sameUuid: number;
  probes: ProbeCounts;
  losses: { taken: number; expired: number };
  releases: { released: number; notHeld: number; failed: number };
  /** Event-loop stalls over 25 ms that the worker saw (SIGSTOP, busy loops, a loaded machine). */
  stallsSeen: number;
  /** Rounds whose `pending` had not settled within WORKLOAD.pendingLimitMs: left-behind not checked. */
  pendingSlow: number;
  /** Process warnings of the library (a lease too short for the round trip). */
  warnings: number;
}

export function emptyTally(): Tally {
  return {
    acquireCalls: 0,
    acquired: 0,
    failed: { held: 0, timeout: 0, redisError: 0, aborted: 0 },
    sameUuid: 0,
    probes: { sent: 0, contradicted: 0, late: 0, unanswered: 0 },
    losses: { taken: 0, expired: 0 },
    releases: { released: 0, notHeld: 0, failed: 0 },
    stallsSeen: 0,
    pendingSlow: 0,
    warnings: 0,
  };
}

/** Violations a worker can see itself; the parent adds those it sees across workers. */
export type WorkerViolationKind =
  /** An ownership probe sent and answered while the library said held found the token gone. */
  | "probe"
  /** The library reported the lock taken (signal, onLost) before its own deadline. */
  | "lost-early"
  /** A token still in Redis after its round ended and the lock's `pending` settled. */
  | "left-behind"
  /** An acquire() that settled too long after its timeout or its abort. */
  | "overrun"
  | "unhandled-rejection";

/** Every kind of violation, in the order the report lists them. */
export const VIOLATION_KINDS = [
  "overlap",
  "probe",
  "lost-early",
  "fencing",
  "left-behind",
  "overrun",
  "unhandled-rejection",
  "no-exit",
  "crash",
  "immortal-key",
] as const;
export type ViolationKind = (typeof VIOLATION_KINDS)[number];

/** Lines a worker writes. Times are wall-clock ms (Date.now()), shared by every process. */
export type WorkerLine =
  | { type: "ready" }
  /** Where the worker is in its round: the parent picks its victims by it. */
  | { type: "state"; state: "waiting" | "holding" | "idle" }
  /**
   * A hold began. `until` is the deadline the library gave it then; `calledAt`, when the acquire()
   * call that got it began (before its grant), orders fencing tokens.
   */
  | { type: "hold"; hold: number; start: number; until: number; calledAt: number; fence: number | null }
  /** The hold ended: the worker stopped believing at `end` (at the latest, its last known deadline). */
  | { type: "unhold"; hold: number; end: number }
  /** `round`: the worker's round it happened in (a hold probed many times reports many). */
  | { type: "violation"; kind: WorkerViolationKind; detail: string; round: number | null }
  | { type: "tally"; tally: Tally }
  /** Finished: the worker exits by itself after this. */
  | { type: "done"; tally: Tally };

/** What the parent sends after the go line. */
export type ParentLine = { type: "stall"; ms: number };

/** Reads one line of worker output; undefined for anything that is not a protocol line. */
export function parseWorkerLine(line: string): WorkerLine | undefined {
  if (!line.startsWith("{")) return undefined;
  try {
    const value = JSON.parse(line) as { type?: unknown };
    return typeof value.type === "string" ? (value as WorkerLine) : undefined;
  } catch {
    return undefined;
  }
}
