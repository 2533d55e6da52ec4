import { backgroundTimer, monotonicNow } from "./clock";
import { type InstanceFailure, type LockOperation, LockRedisError } from "./errors";
import { newCallId } from "./ids";
import type { AcquirePlan } from "./options";
import type { RedisClient, ScriptArgument, ScriptRunner } from "./redis/client";
import { isConnectionRefused, isRefusal } from "./redis/failure";
import { replyIntegers } from "./redis/reply";
import type { ServerKind } from "./redis/server";
import type { LuaScript } from "./scripts/script";
import type { Waiter } from "./waiting";
import type { LockEvents } from "./wake/feed";

/** How an acquisition issues fencing tokens: not at all, or from a counter with or without a clock floor. */
export type FencingPlan = { readonly clockFloor: boolean | undefined } | undefined;

/** A fair waiter's entry in the line, as each of its tries renews it. */
export interface QueueTicket {
  readonly member: string;
  readonly now: number; // wall-clock ms (`Date.now()`): entry deadlines are on the waiters' own clocks
  readonly entryMs: number; // how long, in ms, the entry stays without another try
  readonly lastTry: boolean; // the waiter's last try: it leaves the line if it does not get in
}

/** One try of an acquisition. */
export interface TakeRequest {
  readonly token: string;
  readonly nonce: string; // unique to this try: its receipt, so undoing it never undoes a later one
  readonly lease: number; // ms
  readonly fencing: FencingPlan;
  readonly queue?: QueueTicket | undefined; // fair stores: the waiter's entry in the line
  readonly permit?: number | undefined; // semaphores on a quorum: the only permit to try (same on all)
  /** Whether its caller gave up on the try (abort, timeout): a store sends no more of it (a quorum's rounds). */
  readonly abandoned?: (() => boolean) | undefined;
}

/** What one try found. A try that could not reach Redis rejects with a {@link LockRedisError}. */
export type Take =
  | {
      readonly kind: "acquired";
      readonly fencingToken: number | undefined;
      readonly permit: number; // semaphores: the 1-based permit taken (1 for a lock)
      readonly hold: string; // the id naming this hold on its list (the try's): its release names it
      // true: the token held before the try (it confirmed that hold); false: it held nothing (a hold of it
      // here is gone); undefined: nothing on the permit tried, others unknown (a quorum semaphore's round)
      readonly kept: boolean | undefined;
      // A fair try that confirmed a release's grant to its waiter (which may outlast the lease): the hold's
      // remaining ms as the try ran; else undefined (the lease, from the try's send)
      readonly pttl?: number | undefined;
    }
  | {
      readonly kind: "held";
      readonly pttl: number; // the longest to wait before the next try (holder's lease left), ms; -1: unknown
      readonly ahead?: number | undefined; // fair stores: how many waiters are ahead in the line
      readonly place?: number | undefined; // fair: its place in line, unique while the line lives; 0: none; -1: its name spent
      readonly failures?: readonly InstanceFailure[] | undefined; // quorums: instances it could not ask
      readonly late?: boolean | undefined; // quorums: a majority granted, read after its lease was of use; undone
      readonly partial?: boolean | undefined; // a quorum semaphore's: not every permit asked (a hold elsewhere may live)
      // The token holds by a try sent after this one (a lock's): this try did nothing; one goes again at once
      readonly after?: boolean | undefined;
    };

/** What Redis said about a token: whether it holds, for how much longer (ms; -1 no expiry, -2 not held). */
export interface Observation {
  readonly held: boolean;
  readonly pttl: number;
  /** Semaphores' status and renewal: the permit found holding it (1-based), when the request named none. */
  readonly permit?: number | undefined;
}

/**
 * A release's or extend's own id (its receipt), and `hold`: the id of the try (or fair hand-over) that gave
 * the hold it acts on. It acts only on that hold, not on a newer hold of its token (its late copy ends
 * nothing); "" (a token seeded elsewhere): on any hold of the token.
 */
export interface HoldCall {
  readonly id: string;
  readonly hold: string;
}

/**
 * A lock's or semaphore's Redis side: one Redis or a quorum. Operations take the lease (bounding a quorum
 * member's wait) and, once known, the permit (1 for a lock); all but `undo` reject (LockRedisError).
 */
export interface LockStore {
  /**
   * How one acquisition waits beyond polling: in a fair line, or woken by announcements when the client has
   * wake-ups (`enableWakeUps`) and the plan allows them. Undefined: it polls. `background` takes its clean-up.
   */
  waiter?(token: string, plan: AcquirePlan, background: (work: Promise<unknown>) => void): Waiter | undefined;
  take(request: TakeRequest): Promise<Take>;
  /**
   * Marks try `nonce` abandoned, and releases what it took or confirmed (`permit` if known) once every try
   * that did so was abandoned, unless an extend or release since changed the lock. Failed, it is sent again
   * while `lease` ms pass (the try's lease; 0: sent once; see `undoing`). Never rejects.
   */
  undo(token: string, nonce: string, lease: number, permit?: number): Promise<void>;
  release(token: string, lease: number, permit?: number, call?: HoldCall): Promise<boolean>;
  /** Adds `amount` ms to the lease (0 only checks). */
  extend(
    token: string,
    amount: number,
    lease: number,
    permit?: number,
    call?: HoldCall,
  ): Promise<Observation>;
  /**
   * Makes at least `lease` ms remain, never less than is left. `confirm` (default true): as for `status`;
   * false for a hold a try of this process took (its id on the hold's list already does that job).
   * `hold` (`HoldCall.hold`): the hold renewed (a late copy leaves a newer hold of the token alone), and the one
   * a quorum that finds it lost lets go of; "" (default): any hold of the token.
   */
  renew: Observe;
  /**
   * Whether the token holds. `confirm` (default true): a hold found becomes no try's to undo, as after an
   * extend (a uuid seeded elsewhere holds from then on); false only looks. `hold`: as for `renew` (a lease
   * acquired here holds only its own hold of the token, not a newer one of it elsewhere).
   */
  status: Observe;
}

/** A renewal or status check of `token`'s hold (see `LockStore.renew` and `LockStore.status`). */
type Observe = (
  token: string,
  lease: number,
  permit?: number,
  confirm?: boolean,
  hold?: string,
) => Promise<Observation>;

/** Where a store on one client lives and how to reach it. */
export interface StoreTarget {
  readonly lockId: string;
  readonly key: string; // the lock key: `prefix` + `id`
  /** The lock key as Redis sees it (after ioredis's `keyPrefix`): announcements are named from it. */
  readonly channelKey: string;
  readonly run: ScriptRunner;
  readonly server: ServerKind;
  events(): LockEvents | undefined;
  readonly client: RedisClient;
}

/** Builds one client's store, for a lock or each quorum member; `permits`: a semaphore's permit count. */
export type StoreMaker = ((target: StoreTarget) => LockStore) & { readonly permits?: number };

/**
 * Runs a script for integers (`flagged`: led by a flag, see `replyIntegers`); a failure becomes a
 * LockRedisError without the token (a string args[0]).
 */
export async function runScript(
  target: Pick<StoreTarget, "lockId" | "run">,
  operation: LockOperation,
  script: LuaScript,
  keys: string[],
  args: ScriptArgument[],
  flagged = false,
): Promise<number[]> {
  try {
    return replyIntegers(await target.run(script, keys, args), flagged);
  } catch (error) {
    const secret = typeof args[0] === "string" ? args[0] : undefined;
    throw new LockRedisError(target.lockId, operation, error, { refused: isRefusal(error), secret });
  }
}

/**
 * Whether Redis refused a request in a way no re-send heals (a wrong key type, a script error): it ran
 * nothing. An error reply of the moment is no such proof for a try: it answered the client's last copy, and
 * an earlier copy (the client re-sends one whose connection failed) may have run.
 */
export function refusedOutright(error: unknown): boolean {
  return error instanceof LockRedisError && error.refused;
}

/**
 * Whether a failed try may have run in Redis, its reply lost, so that it is owed an undo: not one refused
 * outright, nor one whose connection was refused. That one reached nothing, and an undo sent into the outage
 * (re-sent by the client, and by {@link undoing}) kept the process alive long after the caller was done
 * (review helper-199: 4 to 9 s on @upstash/redis's default retries). A client that re-sends may have
 * delivered an earlier copy: that key is held for nobody until its lease ends.
 */
export function mayHaveRun(error: unknown): boolean {
  return !refusedOutright(error) && !isConnectionRefused(error);
}

/**
 * Sends an undo until Redis runs it, or refuses it (see {@link refusedOutright}), at most 4 times, 100 ms then
 * 4× longer apart, while its try's lease may still hold (`lease` ms; 0: once): one lost in an outage left the
 * key held for nobody for the lease. An error reply of the moment (`READONLY`, a rate limit) ran nothing of
 * the undo either, so it is sent again too. Sent again it does no harm: an undo acts on its try's request id
 * only. Never rejects; resolves true once Redis answered one.
 */
export async function undoing(send: () => Promise<unknown>, lease: number): Promise<boolean> {
  const until = monotonicNow() + lease;
  for (let wait = 100; ; wait *= 4) {
    try {
      await send();
      return true;
    } catch (error) {
      if (refusedOutright(error) || wait > 1_600 || monotonicNow() + wait >= until) return false;
    }
    await new Promise<void>((resolve) => backgroundTimer(wait, resolve));
  }
}

/** A call naming no hold: it acts on any hold of its token. */
export const anyHold = (): HoldCall => ({ id: newCallId(), hold: "" });

/** What Redis says of a token that holds nothing. */
export const NOT_HELD: Observation = { held: false, pttl: -2 };

/** Reads a `{held, pttl, permit?}` reply. */
export function observation([held = 0, pttl = -2, permit]: number[]): Observation {
  return held === 1 ? { held: true, pttl, permit } : NOT_HELD;
}
