import { clockDriftAllowance, monotonicNow } from "./clock";
import { InstanceTimeoutError, LockRedisError } from "./errors";
import { newTimedCallId } from "./ids";
import { companionKey } from "./keys";
import { prefixedKey } from "./options";
import { sleep, TIMED_OUT, within } from "./race";
import { assertRedisClient, type ScriptArgument, type ScriptRunner, scriptRunnerFor } from "./redis/client";
import { guessServerKind } from "./redis/server";
import { countCall, isLatestCall } from "./scripts/debounce";
import type { LuaScript } from "./scripts/script";
import { runScript } from "./store";
import type { DebounceConfig } from "./types";
import { check } from "./validate";

/** How long (ms) a counter outlives `wait`, so the last caller can read it after a slow request or pause. */
const COUNTER_GRACE_MS = 60_000;

/**
 * Runs a callback once per burst of calls across processes: the last call's, with its args, after `wait` ms.
 * @example
 * const reindex = new Debounce({ id: "reindex", redis, wait: 2000, callback: (why: string) => rebuild(why) });
 * await reindex.call("edited"); // many processes may call; the index is rebuilt once per quiet period
 */
// biome-ignore lint/suspicious/noExplicitAny: as 0.2's `call(...args: any[])`: an untyped callback's arguments stay `any`.
export class Debounce<Args extends unknown[] = any[]> {
  readonly #target: { readonly lockId: string; readonly run: ScriptRunner };
  readonly #keys: string[]; // the counter, and beside it the recent calls' ids (see scripts/debounce.ts)
  readonly #wait: number;
  readonly #callback: (...args: Args) => unknown;

  /**
   * Checks the options and creates the debouncer; sends nothing to Redis.
   * @throws {TypeError | RangeError} when an option is missing or out of range, naming it.
   */
  constructor(config: DebounceConfig<Args>) {
    check("options", config, "object", true);
    const { id, redis, prefix, server, callback } = config; // each read once, then checked
    const wait = config.wait ?? 1_000; // null too, as in 0.2
    check("id", id, "id", true);
    assertRedisClient("redis", redis);
    check("wait", wait, "ms");
    check("callback", callback, "function", true);
    check("server", server, ["upstash", "redis"]);
    const upstash = (server ?? guessServerKind(redis)) === "upstash";
    this.#target = { lockId: id, run: scriptRunnerFor(redis, upstash) };
    const key = prefixedKey(prefix, id);
    this.#keys = [key, companionKey(key, ":calls")];
    this.#wait = wait;
    this.#callback = callback;
  }

  /**
   * Records a call, waits `wait` ms, then runs the callback with `args` unless any process called meanwhile.
   * @returns true when this call ran the callback. The callback's own error propagates.
   * @throws {LockRedisError} when Redis could not be reached, or did not answer while the counter lived
   * (`wait` + 60 s).
   */
  async call(...args: Args): Promise<boolean> {
    const id = newTimedCallId(); // a re-sent request of this call counts once
    const lifetime = this.#wait + COUNTER_GRACE_MS;
    // Each request is useful while the counter lives, from the count's send (early-erring, as a lease is):
    // past that, Redis was silent, and a check run on expired keys would read "another call came". The drift
    // allowance comes off the grace: 1 % of a long `wait` would eat all of it.
    const countSentAt = monotonicNow();
    const keysEndAt = countSentAt + lifetime - clockDriftAllowance(COUNTER_GRACE_MS);
    const { lockId } = this.#target;
    const silence = (waited: number) =>
      new LockRedisError(lockId, "debounce", new InstanceTimeoutError(lockId, "debounce", waited));
    const run = async (script: LuaScript, args: ScriptArgument[], allowance: number) => {
      const answer =
        allowance > 0 // else the keys may be gone already: nothing is sent
          ? await within(runScript(this.#target, "debounce", script, this.#keys, args), allowance, (late) =>
              late.catch(() => {}),
            )
          : TIMED_OUT;
      if (answer !== TIMED_OUT) return answer;
      throw silence(allowance > 0 ? allowance : lifetime);
    };
    const [ours = Number.NaN] = await run(countCall, [lifetime, id], lifetime);
    await sleep(this.#wait);
    const [latest] = await run(isLatestCall, [ours, id], Math.max(0, keysEndAt - monotonicNow()));
    if (latest !== 1) {
      // Read past the keys' end (this process stalled with the answer unread), a "no" may have met expired
      // keys: as unknown as no answer. A "yes" met them alive.
      if (monotonicNow() > keysEndAt) throw silence(lifetime);
      return false;
    }
    await this.#callback(...args);
    return true;
  }
}
