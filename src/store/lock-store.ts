import type { InstanceFailure, LockRedisError } from "../errors";
import type { RenewalOutcome } from "../hold";
import type { LockEvent } from "../wake/release-channel";
import type { StopListening } from "../wake/release-feed";

/** What one acquire round found. */
export type AttemptResult =
  | { readonly kind: "acquired"; readonly fencingToken: number | undefined }
  /**
   * Another token holds the key; `pttl` is the longest to wait before the next attempt (ms, -1
   * when unknown). With a quorum, `failures` lists instances that could not be asked.
   */
  | { readonly kind: "held"; readonly pttl: number; readonly failures?: readonly InstanceFailure[] }
  | { readonly kind: "error"; readonly error: LockRedisError };

/** What Redis said about a token: whether it holds the key, and for how much longer (ms). */
export interface Observation {
  readonly held: boolean;
  readonly pttl: number;
}

/**
 * The Redis side of a lock: where its key lives (one Redis, or a quorum of independent ones) and
 * what each operation means there. The Lock class keeps the local state (token, hold, waits).
 */
export interface LockStore {
  /** One acquire round. Resolves with "error" rather than rejecting when Redis cannot be reached. */
  attempt(token: string, lease: number, fencing: boolean): Promise<AttemptResult>;
  /** Deletes the key if it holds `token`. @throws {LockRedisError} */
  release(token: string): Promise<boolean>;
  /** Adds `amount` ms to the lease if the key holds `token`. @throws {LockRedisError} */
  extend(token: string, amount: number): Promise<Observation>;
  /** Whether the key holds `token`. @throws {LockRedisError} */
  status(token: string): Promise<Observation>;
  /** Restarts the lease if the key holds `token`. @throws {LockRedisError} */
  renew(token: string, lease: number): Promise<RenewalOutcome>;
  /**
   * Calls `onEvent` whenever the lock is released or acquired, from when the promise resolves
   * until the returned function is called. Resolves undefined when the client(s) cannot subscribe.
   */
  listenForEvents(
    onEvent: (event: LockEvent) => void,
    signal: AbortSignal,
  ): Promise<StopListening | undefined>;
}
