// In a worker: one face for every kind of lock it may contend with (Lock, FairLock, Semaphore, and
// @upstash/lock 0.2.1), so that the worker's round, hold and probes are written once.

import { Lock as OldLock } from "@upstash/lock-0.2.1";
import {
  FairLock,
  type Lease,
  Lock,
  LockAcquisitionError,
  type LockLostError,
  Semaphore,
} from "../../src/index";
import type { ChaosWorkerConfig } from "./protocol";
import { WORKLOAD } from "./protocol";
import type { Wiring } from "./wiring";

/** One acquire() call's choices. */
export interface Attempt {
  readonly uuid: string;
  readonly lease: number;
  readonly timeout: number;
  readonly signal: AbortSignal | undefined;
  readonly autoExtend: boolean;
  /** Ask for a fencing token (never on a quorum, which has none). */
  readonly fencing: boolean;
  /** Use the worker's second instance: a same-uuid retry from another object, as from another process. */
  readonly other: boolean;
  readonly onLost: (error: LockLostError) => void;
}

/** A hold, as far as the library tells. */
export interface Holding {
  readonly fencingToken: number | undefined;
  /** Milliseconds the library still gives the hold; 0 once it no longer says held (lost, expired). */
  remainingMs(): number;
  release(): Promise<boolean>;
}

export type Failure = "held" | "timeout" | "redis-error" | "aborted";

export interface Contender {
  acquire(attempt: Attempt): Promise<Holding | Failure>;
  /** Settles once the background work of every instance has (late tries undone, releases finished). */
  pending(): Promise<void>;
}

/** Why an acquireOrThrow() failed; rethrows anything that is not a failed acquisition or the abort. */
function failure(error: unknown, signal: AbortSignal | undefined): Failure {
  if (signal?.aborted && error === signal.reason) return "aborted";
  if (error instanceof LockAcquisitionError) return error.reason;
  throw error;
}

function options(attempt: Attempt) {
  return {
    uuid: attempt.uuid,
    lease: attempt.lease,
    timeout: attempt.timeout,
    autoExtend: attempt.autoExtend,
    fencing: attempt.fencing,
    retry: WORKLOAD.retry,
    onLost: attempt.onLost,
    ...(attempt.signal ? { signal: attempt.signal } : {}),
  };
}

/** The hold a lease gives: read through its signal, which checks the deadline when read. */
function leaseHolding(lease: Pick<Lease, "signal" | "remainingMs" | "fencingToken" | "release">): Holding {
  const signal = lease.signal;
  return {
    fencingToken: lease.fencingToken,
    remainingMs: () => (signal.aborted ? 0 : lease.remainingMs),
    release: () => lease.release(),
  };
}

function lockContender(config: ChaosWorkerConfig, wiring: Wiring): Contender {
  const { scenario, lockId } = config;
  const Kind = scenario.fair ? FairLock : Lock;
  const make = () =>
    new Kind({
      id: lockId,
      redis: wiring.redis,
      // The wrapper around @upstash/redis is not recognised as Upstash: say so, for its scripts' flag.
      ...(scenario.client === "upstash" ? { server: "upstash" as const } : {}),
    });
  const instances = [make(), make()] as const;
  return {
    async acquire(attempt) {
      const lock = instances[attempt.other ? 1 : 0];
      try {
        await lock.acquireOrThrow(options(attempt));
      } catch (error) {
        return failure(error, attempt.signal);
      }
      // The instance's getters act on its current lease: this one, until the next acquire().
      return leaseHolding({
        signal: lock.signal,
        fencingToken: lock.fencingToken,
        get remainingMs() {
          return lock.remainingMs;
        },
        release: () => lock.release(),
      });
    },
    pending: () => Promise.all(instances.map((lock) => lock.pending)).then(() => undefined),
  };
}

function semaphoreContender(config: ChaosWorkerConfig, wiring: Wiring): Contender {
  const { scenario, lockId } = config;
  const make = () =>
    new Semaphore({
      id: lockId,
      redis: wiring.redis,
      limit: scenario.limit,
      fair: scenario.fair,
      ...(scenario.client === "upstash" ? { server: "upstash" as const } : {}),
    });
  const instances = [make(), make()] as const;
  return {
    async acquire(attempt) {
      try {
        return leaseHolding(await instances[attempt.other ? 1 : 0].acquireOrThrow(options(attempt)));
      } catch (error) {
        return failure(error, attempt.signal);
      }
    },
    pending: () => Promise.all(instances.map((semaphore) => semaphore.pending)).then(() => undefined),
  };
}

/** Redis's clock and ours may run at slightly different rates: the allowance the library takes too. */
const driftAllowance = (lease: number) => Math.floor(lease * 0.01) + 2;

/**
 * @upstash/lock 0.2.1 on the same key: it has no deadline, so this holder gives itself one, the
 * lease from when its single SET was sent; it has no timeout either, so this tries until `timeout`.
 */
function oldContender(config: ChaosWorkerConfig, wiring: Wiring): Contender {
  const lock = new OldLock({ id: config.lockId, redis: wiring.upstash });
  return {
    async acquire(attempt) {
      const until = performance.now() + attempt.timeout;
      let failed: Failure = "held";
      while (performance.now() < until && !attempt.signal?.aborted) {
        const sentAt = performance.now();
        try {
          const taken = await lock.acquire({
            lease: attempt.lease,
            uuid: attempt.uuid,
            retry: { attempts: 1, delay: 0 },
          });
          if (taken) {
            const deadline = sentAt + attempt.lease - driftAllowance(attempt.lease);
            return {
              fencingToken: undefined,
              remainingMs: () => Math.max(0, Math.floor(deadline - performance.now())),
              release: () => lock.release(),
            };
          }
          failed = "held";
        } catch {
          failed = "redis-error";
        }
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      return attempt.signal?.aborted ? "aborted" : failed === "held" ? "timeout" : failed;
    },
    pending: () => Promise.resolve(),
  };
}

export function contenderFor(config: ChaosWorkerConfig, wiring: Wiring): Contender {
  if (config.library === "0.2.1") return oldContender(config, wiring);
  return config.scenario.kind.endsWith("semaphore")
    ? semaphoreContender(config, wiring)
    : lockContender(config, wiring);
}
