// The chaos run's fault schedule for one scenario: every few hundred milliseconds one fault from
// the scenario's list, drawn from a seeded generator, so that a seed gives the same sequence of
// faults (their timing against the workers' requests is never exactly repeatable).

import type { PassThrough } from "../../test/support/pass-through";
import { between, type FaultLimits, type Random } from "../soak/faults";
import { Timers } from "../support/timers";
import type { FaultKind, Scenario } from "./scenarios";
import type { Member } from "./stage";

/** The parent's handle on a live worker, as the schedule uses it. */
export interface Victim {
  readonly name: string;
  readonly state: "waiting" | "holding" | "idle";
  /** Set while the schedule keeps it SIGSTOPped. */
  stopped: boolean;
  /** Its own HTTP wire, on one Redis over @upstash/redis. */
  readonly wire: PassThrough | undefined;
  signal(signal: "SIGSTOP" | "SIGCONT"): void;
  stall(ms: number): void;
}

export interface Targets {
  readonly members: readonly Member[];
  /** The workers alive now. */
  victims(): readonly Victim[];
  /**
   * SIGKILLs a worker and starts another in its place; false (nothing done) while an earlier
   * replacement is still starting, so that starts never pile up on a small machine.
   */
  kill(victim: Victim): boolean;
}

/** Limits of every scheduled fault, in ms or requests. */
export const CHAOS_LIMITS = {
  /** Pause between two faults. */
  gapMs: [200, 700],
  freezeMs: [50, 400],
  workerStopMs: [50, 600],
  stallMs: [50, 400],
  /** A reorder covers this many of the wire's next requests... */
  delayedRequests: [8, 24],
  /** ...and holds each of them, with this probability, for delayMs while the others pass. */
  delayShare: 0.4,
  delayMs: [50, 300],
} as const;

/**
 * The soak's lossy wire (its FaultInjector), scaled to leases of 50-300 ms: its own limits, made
 * for 500 ms leases, would fail nearly every try.
 */
export const WIRE_LIMITS: FaultLimits = {
  gapMs: [300, 2_000],
  latencyMs: [10, 120],
  latencyDurationMs: [100, 800],
  droppedReplies: [1, 2],
  status5xx: [1, 2],
  refusedRequests: [1, 3],
  outageMs: [50, 400],
};

/** How often each fault is drawn, relative to the others of the scenario. */
const WEIGHTS: Readonly<Record<FaultKind, number>> = {
  "redis-freeze": 2,
  "pubsub-kill": 2,
  "worker-stop": 2,
  "worker-kill": 1,
  stall: 2,
  reorder: 5,
};

export type FaultCounts = Record<FaultKind, number>;

export class ChaosSchedule {
  readonly counts: FaultCounts = {
    "redis-freeze": 0,
    "pubsub-kill": 0,
    "worker-stop": 0,
    "worker-kill": 0,
    stall: 0,
    reorder: 0,
  };
  readonly #scenario: Scenario;
  readonly #targets: Targets;
  readonly #random: Random;
  readonly #timers = new Timers();

  constructor(scenario: Scenario, targets: Targets, random: Random) {
    this.#scenario = scenario;
    this.#targets = targets;
    this.#random = random;
  }

  start(): void {
    this.#timers.after(between(this.#random, CHAOS_LIMITS.gapMs), () => this.#injectOne());
  }

  /** Stops injecting; thaws every member and continues every worker it stopped. */
  stop(): void {
    this.#timers.stop();
    for (const member of this.#targets.members) {
      member.server.thaw();
      member.frozen = false;
      member.wire?.faults.reset();
    }
    for (const victim of this.#targets.victims()) {
      if (victim.stopped) victim.signal("SIGCONT");
      victim.stopped = false;
    }
  }

  #draw(): FaultKind {
    const kinds = this.#scenario.faults;
    const total = kinds.reduce((sum, kind) => sum + WEIGHTS[kind], 0);
    let roll = this.#random() * total;
    for (const kind of kinds) {
      roll -= WEIGHTS[kind];
      if (roll < 0) return kind;
    }
    return kinds[kinds.length - 1] as FaultKind;
  }

  /** A worker, in state `preferred` when one is (and a draw says so), never one already stopped. */
  #victim(preferred: Victim["state"], share: number): Victim | undefined {
    const live = this.#targets.victims().filter((victim) => !victim.stopped);
    const wanted = live.filter((victim) => victim.state === preferred);
    const pool = wanted.length > 0 && this.#random() < share ? wanted : live;
    return pool[Math.floor(this.#random() * pool.length)];
  }

  #injectOne(): void {
    const random = this.#random;
    const kind = this.#draw();
    if (this.#inject(kind)) this.counts[kind] += 1;
    this.#timers.after(between(random, CHAOS_LIMITS.gapMs), () => this.#injectOne());
  }

  /** @returns whether the fault was injected (there may be no worker or member to inject it into). */
  #inject(kind: FaultKind): boolean {
    const random = this.#random;
    const members = this.#targets.members;
    switch (kind) {
      case "redis-freeze": {
        // At most one member frozen at a time: a quorum keeps its majority, and a thaw always comes.
        if (members.some((member) => member.frozen)) return false;
        const member = members[Math.floor(random() * members.length)] as Member;
        member.frozen = true;
        member.server.freeze();
        this.#timers.after(between(random, CHAOS_LIMITS.freezeMs), () => {
          member.server.thaw();
          member.frozen = false;
        });
        return true;
      }
      case "pubsub-kill": {
        for (const member of members) {
          if (!member.frozen) member.admin.call("CLIENT", "KILL", "TYPE", "pubsub").catch(() => {});
        }
        return true;
      }
      case "worker-stop": {
        const victim = this.#victim("holding", 0.7);
        if (!victim) return false;
        victim.stopped = true;
        victim.signal("SIGSTOP");
        this.#timers.after(between(random, CHAOS_LIMITS.workerStopMs), () => {
          victim.signal("SIGCONT");
          victim.stopped = false;
        });
        return true;
      }
      case "worker-kill": {
        // In a fair line, a waiter that dies keeps its place until its entry expires.
        const victim = this.#victim(
          this.#scenario.fair ? "waiting" : "holding",
          this.#scenario.fair ? 0.9 : 0.5,
        );
        return victim !== undefined && this.#targets.kill(victim);
      }
      case "stall": {
        const victim = this.#victim("holding", 0.7);
        if (!victim) return false;
        victim.stall(between(random, CHAOS_LIMITS.stallMs));
        return true;
      }
      case "reorder": {
        // A quorum member's wire, which every worker shares; on one Redis, a waiter's own wire,
        // since a same-uuid retry follows a failed acquire.
        const wire =
          members.length > 1
            ? members[Math.floor(random() * members.length)]?.wire
            : this.#victim("waiting", 0.7)?.wire;
        if (!wire) return false;
        // Some of the next requests held, the rest not: later ones overtake the held ones, as
        // over paths of different speed (separate connections, pipelines, retries).
        for (let count = between(random, CHAOS_LIMITS.delayedRequests); count > 0; count--) {
          const held = random() < CHAOS_LIMITS.delayShare;
          wire.faults.delayNext(1, held ? between(random, CHAOS_LIMITS.delayMs) : 0);
        }
        return true;
      }
    }
  }
}
