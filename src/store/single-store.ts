import { newCallId } from "../call-id";
import type { ScriptArgument } from "../client/redis-client";
import { replyInteger, replyIntegers } from "../client/reply";
import type { ScriptRunner } from "../client/script-runner";
import { type LockOperation, LockRedisError } from "../errors";
import type { RenewalOutcome } from "../hold";
import { FENCE_COUNTER_LIFETIME_MS, fenceKey, receiptKey } from "../keys";
import { takeIfFreeOrOwned } from "../scripts/acquire";
import { addLeaseIfOwned } from "../scripts/extend";
import type { LuaScript } from "../scripts/lua-script";
import { deleteIfOwned } from "../scripts/release";
import { renewIfOwned } from "../scripts/renew";
import { checkOwner } from "../scripts/status";
import { type LockEvent, lockEventChannel } from "../wake/release-channel";
import type { ReleaseFeed, StopListening } from "../wake/release-feed";
import type { AttemptResult, LockStore, Observation } from "./lock-store";

/** A lock whose key lives on one Redis (a single server, a replicated primary, or a cluster). */
export class SingleStore implements LockStore {
  readonly #lockId: string;
  readonly #key: string;
  readonly #scripts: ScriptRunner;
  readonly #receiptKey: string;
  readonly #feed: ReleaseFeed | undefined;
  #channel: Promise<string | undefined> | undefined;

  /**
   * @param scripts runs the scripts on the client.
   * @param feed the client's release announcements, when it can subscribe.
   */
  constructor(lockId: string, key: string, scripts: ScriptRunner, feed: ReleaseFeed | undefined) {
    this.#lockId = lockId;
    this.#key = key;
    this.#scripts = scripts;
    this.#receiptKey = receiptKey(key);
    this.#feed = feed;
  }

  async attempt(token: string, lease: number, fencing: boolean): Promise<AttemptResult> {
    const keys = fencing ? [this.#key, fenceKey(this.#key)] : [this.#key];
    const args: [string, ...ScriptArgument[]] = fencing
      ? [token, lease, lease + FENCE_COUNTER_LIFETIME_MS]
      : [token, lease];
    try {
      const [held = 0, detail = -2] = replyIntegers(
        await this.#run("acquire", takeIfFreeOrOwned, keys, args),
      );
      if (held === 1) return { kind: "acquired", fencingToken: fencing ? detail : undefined };
      return { kind: "held", pttl: detail };
    } catch (error) {
      if (error instanceof LockRedisError) return { kind: "error", error };
      throw error;
    }
  }

  async release(token: string): Promise<boolean> {
    // Each call gets its own id, so that its receipt answers only its own re-runs.
    const keys = [this.#key, this.#receiptKey];
    const reply = await this.#run("release", deleteIfOwned, keys, [token, newCallId()]);
    return replyInteger(reply) === 1;
  }

  async extend(token: string, amount: number): Promise<Observation> {
    const keys = [this.#key, this.#receiptKey];
    return observation(await this.#run("extend", addLeaseIfOwned, keys, [token, newCallId(), amount]));
  }

  async status(token: string): Promise<Observation> {
    return observation(await this.#run("status", checkOwner, [this.#key], [token]));
  }

  async renew(token: string, lease: number): Promise<RenewalOutcome> {
    const reply = await this.#run("renew", renewIfOwned, [this.#key], [token, lease]);
    return replyInteger(reply) === 1 ? "renewed" : "not-held";
  }

  async listenForEvents(
    onEvent: (event: LockEvent) => void,
    signal: AbortSignal,
  ): Promise<StopListening | undefined> {
    if (!this.#feed) return undefined;
    this.#channel ??= lockEventChannel(this.#key);
    const channel = await this.#channel;
    if (channel === undefined || signal.aborted) return undefined;
    return this.#feed.listen(channel, onEvent, signal);
  }

  /** Runs a script whose first argument is the token; failures become LockRedisError without it. */
  async #run(
    operation: LockOperation,
    script: LuaScript,
    keys: string[],
    args: [string, ...ScriptArgument[]],
  ) {
    try {
      return await this.#scripts.run(script, keys, args);
    } catch (error) {
      throw new LockRedisError(this.#lockId, operation, error, args[0]);
    }
  }
}

function observation(reply: unknown): Observation {
  const [held = 0, pttl = -2] = replyIntegers(reply);
  return { held: held === 1, pttl };
}
