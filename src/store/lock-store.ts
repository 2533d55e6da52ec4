import type { InstanceFailure, LockRedisError } from "../errors";
import type { FencingPlan } from "../options";
import type { FeedEvent, Listening } from "../wake/feed-types";

/** What one acquire round found. */
export type AttemptResult =
  | { readonly kind: "acquired"; readonly fencingToken: number | undefined }
  /**
   * Another token holds the key; `pttl` is the longest to wait before the next attempt (ms, -1
   * when unknown), `holder` a fingerprint of that token when known (equal fingerprints: most likely
   * the same holder). With a quorum, `failures` lists instances that could not be asked.
   */
  | {
      readonly kind: "held";
      readonly pttl: number;
      readonly holder?: number | undefined;
      /** Fair stores: how many waiters are ahead in the line. */
      readonly ahead?: number | undefined;
      /**
       * Fair stores: the caller's place in line, which no later stay in line repeats (a grant names
       * it); undefined when the caller is not in line.
       */
      readonly place?: number | undefined;
      readonly failures?: readonly InstanceFailure[];
    }
  | { readonly kind: "error"; readonly error: LockRedisError };

/** What a try of a fair acquisition tells the queue about its waiter. */
export interface QueueTicket {
  /** Wall-clock milliseconds (`Date.now()`): queue deadlines are on the waiters' own clocks. */
  readonly now: number;
  /** How long the waiter's entry stays without another try, in milliseconds. */
  readonly entryTtl: number;
  /** The waiter's last try: it leaves the queue if it does not get in. */
  readonly lastTry: boolean;
}

/**
 * What Redis said about a token: whether it holds the key, and for how much longer (ms; -1 when
 * the key has no expiry, -2 when not held).
 */
export interface Observation {
  readonly held: boolean;
  readonly pttl: number;
}

/**
 * The Redis side of a lock: where its key lives (one Redis, or a quorum of independent ones) and
 * what each operation means there. The Lock class keeps the local state (token, hold, waits).
 * Every operation takes the lease in play, which bounds how long a quorum waits for one instance.
 */
export interface LockStore {
  /** Whether waits can subscribe to the lock's announcements here (the client can subscribe). */
  readonly canListen: boolean;
  /** Whether waiters queue in arrival order (a fair lock or semaphore). */
  readonly fair: boolean;
  /**
   * One acquire round. Resolves with "error" rather than rejecting when Redis cannot be reached.
   * @param ticket the waiter's queue entry, for fair stores.
   * @param onlyPermit a 1-based permit to try alone (a quorum takes the same permit everywhere).
   */
  attempt(
    token: string,
    lease: number,
    fencing: FencingPlan,
    ticket?: QueueTicket,
    onlyPermit?: number,
  ): Promise<AttemptResult>;
  /**
   * Takes `token` out of the fair line (it stopped waiting). With `handBack`, a permit a release
   * handed it meanwhile is freed and handed on; without, a permit it holds is left alone (the
   * caller holds it). Never rejects.
   */
  leaveQueue(token: string, handBack: boolean): Promise<void>;
  /** Deletes the key if it holds `token`. @throws {LockRedisError} */
  release(token: string, lease: number): Promise<boolean>;
  /** Adds `amount` ms to the lease if the key holds `token` (0 only checks). @throws {LockRedisError} */
  extend(token: string, amount: number, lease: number): Promise<Observation>;
  /** Whether the key holds `token`. @throws {LockRedisError} */
  status(token: string, lease: number): Promise<Observation>;
  /** Makes at least `lease` ms remain, never less than is left, if the key holds `token`. @throws {LockRedisError} */
  renew(token: string, lease: number): Promise<Observation>;
  /**
   * Calls `onEvent` whenever the lock is released or acquired (or "ended" if the subscription
   * breaks), from when the promise resolves until the listening is stopped; with `replaySince`
   * (monotonic ms), also for the events a subscription already active received since then (see
   * {@link EventFeed.listen}). Resolves undefined when the client(s) cannot subscribe or `signal`
   * aborts first.
   */
  listenForEvents(
    onEvent: (event: FeedEvent) => void,
    signal: AbortSignal,
    replaySince?: number,
  ): Promise<Listening | undefined>;
}
