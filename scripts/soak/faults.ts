// Random, bounded faults on one worker's pass-through: every few hundred milliseconds one of a
// latency spike, dropped replies, 5xx answers, a few refused requests, or a short outage.

import type { PassThrough } from "../../test/support/pass-through";
import { Timers } from "../support/timers";

/** The kinds of fault the soak injects, and how many of each it injected. */
export interface FaultCounts {
  latencySpikes: number;
  droppedReplies: number;
  status5xx: number;
  refused: number;
  outages: number;
}

/** Limits of every fault, in ms or requests. */
export interface FaultLimits {
  /** Pause between two faults on one pass-through. */
  readonly gapMs: readonly [number, number];
  /** Added to every request during a spike. */
  readonly latencyMs: readonly [number, number];
  readonly latencyDurationMs: readonly [number, number];
  readonly droppedReplies: readonly [number, number];
  readonly status5xx: readonly [number, number];
  readonly refusedRequests: readonly [number, number];
  /** Every request refused for this long. */
  readonly outageMs: readonly [number, number];
}

/** The soak's limits, for its 500 ms leases. */
export const FAULT_LIMITS = {
  gapMs: [200, 1_500],
  /** Below the lease, but several renewal intervals. */
  latencyMs: [50, 450],
  latencyDurationMs: [200, 1_500],
  droppedReplies: [1, 2],
  status5xx: [1, 3],
  refusedRequests: [1, 4],
  /** Sometimes longer than the lease, so holds get lost. */
  outageMs: [100, 900],
} as const satisfies FaultLimits;

/** A source of random numbers in [0, 1). */
export type Random = () => number;

/** mulberry32: a small seeded generator, so that a run's fault schedule can be drawn again. */
export function seededRandom(seed: number): Random {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

export function between(random: Random, [min, max]: readonly [number, number]): number {
  return min + Math.floor(random() * (max - min + 1));
}

/** Injects faults into `passThrough` until stopped. */
export class FaultInjector {
  readonly counts: FaultCounts = {
    latencySpikes: 0,
    droppedReplies: 0,
    status5xx: 0,
    refused: 0,
    outages: 0,
  };
  readonly #faults: PassThrough["faults"];
  readonly #random: Random;
  readonly #limits: FaultLimits;
  readonly #timers = new Timers();
  /** The latency of a spike in progress, restored when an outage ends (ending one resets all). */
  #latencyMs = 0;

  constructor(passThrough: PassThrough, random: Random, limits: FaultLimits = FAULT_LIMITS) {
    this.#faults = passThrough.faults;
    this.#random = random;
    this.#limits = limits;
  }

  start(): void {
    this.#timers.after(between(this.#random, this.#limits.gapMs), () => this.#injectOne());
  }

  /** Stops injecting and clears every fault in place. */
  stop(): void {
    this.#timers.stop();
    this.#faults.reset();
  }

  #injectOne(): void {
    const random = this.#random;
    const roll = random();
    if (roll < 0.3) {
      this.counts.latencySpikes += 1;
      this.#latencyMs = between(random, this.#limits.latencyMs);
      this.#faults.latency(this.#latencyMs);
      this.#timers.after(between(random, this.#limits.latencyDurationMs), () => {
        this.#latencyMs = 0;
        this.#faults.latency(0);
      });
    } else if (roll < 0.5) {
      this.counts.droppedReplies += 1;
      this.#faults.dropReplies(between(random, this.#limits.droppedReplies));
    } else if (roll < 0.7) {
      this.counts.status5xx += 1;
      this.#faults.status5xx(between(random, this.#limits.status5xx));
    } else if (roll < 0.9) {
      this.counts.refused += 1;
      this.#faults.refuse(between(random, this.#limits.refusedRequests));
    } else {
      this.counts.outages += 1;
      this.#faults.refuse();
      this.#timers.after(between(random, this.#limits.outageMs), () => {
        this.#faults.reset();
        this.#faults.latency(this.#latencyMs);
      });
    }
    this.#timers.after(between(random, this.#limits.gapMs), () => this.#injectOne());
  }
}
