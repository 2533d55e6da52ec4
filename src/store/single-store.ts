import { replyInteger, replyIntegers } from "../client/reply";
import type { ScriptRunner } from "../client/script-runner";
import type { ServerKind } from "../client/server";
import type { ScriptArgument } from "../client/types";
import { type LockOperation, LockRedisError } from "../errors";
import { newCallId } from "../ids";
import { FENCE_COUNTER_LIFETIME_MS, fenceKey, receiptKey } from "../keys";
import type { FencingPlan } from "../options";
import { takeIfFreeOrOwned, takeWithClockFence, takeWithCountedFence } from "../scripts/acquire";
import { addLeaseIfOwned } from "../scripts/extend";
import { deleteIfOwned } from "../scripts/release";
import { renewIfOwned } from "../scripts/renew";
import type { LuaScript } from "../scripts/script";
import { checkOwner } from "../scripts/status";
import type { EventFeed } from "../wake/feed-types";
import { type EventListenerForLock, lockEventListener } from "../wake/lock-events";
import type { AttemptResult, LockStore, Observation } from "./lock-store";

/** Where a single-server lock lives and how to reach it. */
export interface SingleStoreTarget {
  readonly lockId: string;
  readonly key: string;
  /** Runs the scripts on the client, plain or key-locked as the server kind requires. */
  readonly scripts: ScriptRunner;
  /** The kind of server: decides how fencing tokens stay increasing by default. */
  readonly server: ServerKind;
  /** The client's lock announcements, when it can subscribe. */
  readonly feed: EventFeed | undefined;
}

/** A lock whose key lives on one Redis (a single server, a replicated primary, or a cluster). */
export class SingleStore implements LockStore {
  readonly #target: SingleStoreTarget;
  readonly #receiptKey: string;
  /** See {@link LockStore.listenForEvents}. */
  readonly listenForEvents: EventListenerForLock;

  constructor(target: SingleStoreTarget) {
    this.#target = target;
    this.listenForEvents = lockEventListener(target.feed, target.key);
    this.#receiptKey = receiptKey(target.key);
  }

  get canListen(): boolean {
    return this.#target.feed !== undefined;
  }

  readonly fair = false;

  async leaveQueue(): Promise<void> {
    // Not fair: no queue to leave.
  }

  async attempt(token: string, lease: number, fencing: FencingPlan): Promise<AttemptResult> {
    const { script, keys, args } = this.#acquireCall(token, lease, fencing);
    try {
      const [held = 0, detail = -2, holder] = replyIntegers(await this.#run("acquire", script, keys, args));
      if (held === 1) return { kind: "acquired", fencingToken: fencing ? detail : undefined };
      return { kind: "held", pttl: detail, holder };
    } catch (error) {
      if (error instanceof LockRedisError) return { kind: "error", error };
      throw error;
    }
  }

  /**
   * The acquire script for the fencing asked for. Without a clock floor (Upstash's default), the
   * counter never expires, so the script reads no clock; with it, the counter may expire.
   */
  #acquireCall(token: string, lease: number, fencing: FencingPlan) {
    const key = this.#target.key;
    if (!fencing) return { script: takeIfFreeOrOwned, keys: [key], args: [token, lease] as const };
    const clockFloor = fencing.clockFloor ?? this.#target.server !== "upstash";
    const keys = [key, fenceKey(key)];
    if (!clockFloor) return { script: takeWithCountedFence, keys, args: [token, lease] as const };
    return {
      script: takeWithClockFence,
      keys,
      args: [token, lease, lease + FENCE_COUNTER_LIFETIME_MS] as const,
    };
  }

  async release(token: string): Promise<boolean> {
    // Each call gets its own id, so that its receipt answers only its own re-runs.
    const keys = [this.#target.key, this.#receiptKey];
    return replyInteger(await this.#run("release", deleteIfOwned, keys, [token, newCallId()])) === 1;
  }

  async extend(token: string, amount: number): Promise<Observation> {
    const keys = [this.#target.key, this.#receiptKey];
    return observation(await this.#run("extend", addLeaseIfOwned, keys, [token, newCallId(), amount]));
  }

  async status(token: string): Promise<Observation> {
    return observation(await this.#run("status", checkOwner, [this.#target.key], [token]));
  }

  async renew(token: string, lease: number): Promise<Observation> {
    return observation(await this.#run("renew", renewIfOwned, [this.#target.key], [token, lease]));
  }

  /** Runs a script whose first argument is the token; failures become LockRedisError without it. */
  async #run(
    operation: LockOperation,
    script: LuaScript,
    keys: string[],
    args: readonly [string, ...ScriptArgument[]],
  ) {
    try {
      return await this.#target.scripts.run(script, keys, [...args]);
    } catch (error) {
      throw new LockRedisError(this.#target.lockId, operation, error, args[0]);
    }
  }
}

function observation(reply: unknown): Observation {
  const [held = 0, pttl = -2] = replyIntegers(reply);
  return { held: held === 1, pttl: held === 1 ? pttl : -2 };
}
