import { replyInteger, replyIntegers } from "../client/reply";
import type { ScriptRunner } from "../client/script-runner";
import type { ServerKind } from "../client/server";
import type { ScriptArgument } from "../client/types";
import { type LockOperation, LockRedisError } from "../errors";
import { sameSlotKey } from "../hash-slot";
import { newCallId } from "../ids";
import { FENCE_COUNTER_LIFETIME_MS, fenceKey, receiptKey } from "../keys";
import type { FencingPlan } from "../options";
import {
  addLeaseToPermit,
  checkPermit,
  leaveQueue,
  releasePermit,
  renewPermit,
  takePermit,
  takePermitWithClockFence,
  takePermitWithCountedFence,
} from "../scripts/permits";
import type { LuaScript } from "../scripts/script";
import type { EventFeed } from "../wake/feed-types";
import { type EventListenerForLock, lockEventListener } from "../wake/lock-events";
import type { AttemptResult, LockStore, Observation, QueueTicket } from "./lock-store";

/** Where a set of permits lives on one Redis, and how to reach it. */
export interface PermitStoreTarget {
  readonly lockId: string;
  /** The base key: `prefix` + `id`. It names the event channel and the companion keys. */
  readonly key: string;
  /** The permit keys: the lock key alone for a fair lock, one key per permit for a semaphore. */
  readonly permits: readonly string[];
  /** Whether waiters queue in arrival order. */
  readonly fair: boolean;
  /**
   * Fair: the longest a release hands a permit to the next waiter for, in milliseconds (never more
   * than the releaser's lease). A waiter that died holds it that long at most.
   */
  readonly grantMs: number;
  readonly scripts: ScriptRunner;
  readonly server: ServerKind;
  readonly feed: EventFeed | undefined;
}

/**
 * The keys of a semaphore with `limit` permits on base key `key`: `{key}:permit:<n>`, all in the
 * base key's hash slot, so one script may touch them all.
 */
export function permitKeys(key: string, limit: number): string[] {
  return Array.from({ length: limit }, (_, index) => sameSlotKey(key, `:permit:${index + 1}`));
}

/** The fair queue's two sorted sets for base key `key`, in its hash slot. */
function queueKeys(key: string): [queue: string, deadlines: string] {
  return [sameSlotKey(key, ":queue"), sameSlotKey(key, ":queue-deadlines")];
}

/** The counter that numbers places in the fair queue of base key `key`, in its hash slot. */
function placesKey(key: string): string {
  return sameSlotKey(key, ":queue-places");
}

/**
 * A semaphore's permits, or a fair lock's key and queue, on one Redis (a single server, a
 * replicated primary, or a cluster: every key shares the base key's slot).
 */
export class PermitStore implements LockStore {
  readonly #target: PermitStoreTarget;
  /** queue, deadlines, fencing counter, places: the keys every take script gets before the permits. */
  readonly #takeKeys: string[];
  readonly #releaseKeys: string[];
  readonly #extendKeys: string[];
  readonly #queueKeys: string[];
  /** See {@link LockStore.listenForEvents}. */
  readonly listenForEvents: EventListenerForLock;

  constructor(target: PermitStoreTarget) {
    this.#target = target;
    this.listenForEvents = lockEventListener(target.feed, target.key);
    const queue = queueKeys(target.key);
    this.#queueKeys = queue;
    this.#takeKeys = [...queue, fenceKey(target.key), placesKey(target.key), ...target.permits];
    this.#releaseKeys = [...queue, receiptKey(target.key), ...target.permits];
    this.#extendKeys = [receiptKey(target.key), ...target.permits];
  }

  get canListen(): boolean {
    return this.#target.feed !== undefined;
  }

  get fair(): boolean {
    return this.#target.fair;
  }

  async attempt(
    token: string,
    lease: number,
    fencing: FencingPlan,
    ticket?: QueueTicket,
    onlyPermit = 0,
  ): Promise<AttemptResult> {
    const fair = this.#target.fair && ticket !== undefined;
    const args: [string, ...ScriptArgument[]] = [
      token,
      lease,
      this.#target.key,
      fair ? "1" : "0",
      ticket?.now ?? 0,
      ticket?.entryTtl ?? 0,
      ticket?.lastTry ? "1" : "0",
      onlyPermit,
    ];
    const script = this.#takeScript(fencing);
    if (script === takePermitWithClockFence) args.push(lease + FENCE_COUNTER_LIFETIME_MS);
    try {
      const reply = replyIntegers(await this.#run("acquire", script, this.#takeKeys, args));
      const [taken = 0, detail = -2, third, ahead, place] = reply;
      if (taken === 1) return { kind: "acquired", fencingToken: fencing ? third : undefined };
      return { kind: "held", pttl: detail, holder: third || undefined, ahead, place: place || undefined };
    } catch (error) {
      if (error instanceof LockRedisError) return { kind: "error", error };
      throw error;
    }
  }

  /** Without a clock floor (Upstash's default) the counter never expires, so no clock is read. */
  #takeScript(fencing: FencingPlan): LuaScript {
    if (!fencing) return takePermit;
    const clockFloor = fencing.clockFloor ?? this.#target.server !== "upstash";
    return clockFloor ? takePermitWithClockFence : takePermitWithCountedFence;
  }

  async release(token: string, lease: number): Promise<boolean> {
    const args: [string, ...ScriptArgument[]] = [
      token,
      newCallId(),
      this.#target.key,
      this.#target.fair ? "1" : "0",
      Date.now(),
      Math.min(this.#target.grantMs, lease),
    ];
    return replyInteger(await this.#run("release", releasePermit, this.#releaseKeys, args)) === 1;
  }

  async extend(token: string, amount: number): Promise<Observation> {
    const reply = await this.#run("extend", addLeaseToPermit, this.#extendKeys, [token, newCallId(), amount]);
    return observation(reply);
  }

  async status(token: string): Promise<Observation> {
    return observation(await this.#run("status", checkPermit, [...this.#target.permits], [token]));
  }

  async renew(token: string, lease: number): Promise<Observation> {
    return observation(await this.#run("renew", renewPermit, [...this.#target.permits], [token, lease]));
  }

  async leaveQueue(token: string, handedBack: boolean): Promise<void> {
    if (!this.#target.fair) return;
    // Without handing back, only the line is left: the token may hold a permit it keeps.
    const keys = handedBack ? [...this.#queueKeys, ...this.#target.permits] : [...this.#queueKeys];
    const args: [string, ...ScriptArgument[]] = [token, this.#target.key, Date.now(), this.#target.grantMs];
    try {
      await this.#run("acquire", leaveQueue, keys, args);
    } catch {
      // Best effort: the entry's own deadline drops it soon anyway, and a grant runs out.
    }
  }

  /** Runs a script whose first argument is the token; failures become LockRedisError without it. */
  async #run(
    operation: LockOperation,
    script: LuaScript,
    keys: string[],
    args: [string, ...ScriptArgument[]],
  ) {
    try {
      return await this.#target.scripts.run(script, keys, args);
    } catch (error) {
      throw new LockRedisError(this.#target.lockId, operation, error, args[0]);
    }
  }
}

function observation(reply: unknown): Observation {
  const [held = 0, pttl = -2] = replyIntegers(reply);
  return { held: held === 1, pttl: held === 1 ? pttl : -2 };
}
