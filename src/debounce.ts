import { replyInteger } from "./client/reply";
import { assertEvalClient, type ScriptRunner, scriptRunnerFor } from "./client/script-runner";
import { guessServerKind } from "./client/server";
import { describeValue } from "./describe-value";
import { LockRedisError } from "./errors";
import { DEBOUNCE_COUNTER_GRACE_MS } from "./keys";
import { prefixedKey } from "./options";
import { sleep } from "./race";
import { countCall, isLatestCall } from "./scripts/debounce";
import type { LuaScript } from "./scripts/script";
import type { DebounceConfig } from "./types";
import {
  assertFunction,
  assertNonEmptyString,
  assertOptionalObject,
  assertPositiveInteger,
} from "./validate";

const DEFAULT_WAIT_MS = 1000;

/**
 * Runs a callback once per burst of calls across processes: each `call()` waits `wait`
 * milliseconds, and only the last call of a burst runs the callback.
 *
 * @example
 * const reindex = new Debounce({ id: "reindex", redis, wait: 2000, callback: rebuildIndex });
 * await reindex.call(); // many processes may call; the index is rebuilt once per quiet period
 */
export class Debounce {
  readonly #id: string;
  readonly #key: string;
  readonly #scripts: ScriptRunner;
  readonly #wait: number;
  readonly #callback: DebounceConfig["callback"];

  /**
   * Checks the options; sends nothing to Redis.
   * @throws {TypeError | RangeError} when an option is missing or out of range.
   */
  constructor(config: DebounceConfig) {
    assertOptionalObject("options", config);
    if (config === undefined) throw new TypeError("Expected `options` to be an object, got undefined");
    assertNonEmptyString("id", config.id);
    assertEvalClient(config.redis);
    const wait = config.wait ?? DEFAULT_WAIT_MS;
    assertPositiveInteger("wait", wait, "milliseconds");
    assertFunction("callback", config.callback);
    const server = config.server ?? guessServerKind(config.redis);
    if (server !== "upstash" && server !== "redis") {
      throw new TypeError(`Expected \`server\` to be "upstash" or "redis", got ${describeValue(server)}`);
    }
    this.#id = config.id;
    this.#key = prefixedKey(config.prefix, config.id);
    this.#scripts = scriptRunnerFor(config.redis, server === "upstash");
    this.#wait = wait;
    this.#callback = config.callback;
  }

  /**
   * Records a call, waits `wait` milliseconds, then runs the callback with `args` if no other
   * call was recorded meanwhile (from any process).
   * @returns true when this call ran the callback. The callback's own error propagates.
   * @throws {LockRedisError} when Redis could not be reached.
   */
  // biome-ignore lint/suspicious/noExplicitAny: arguments are forwarded to the user's callback untouched.
  async call(...args: any[]): Promise<boolean> {
    const ours = replyInteger(await this.#run(countCall, [this.#wait + DEBOUNCE_COUNTER_GRACE_MS]));
    await sleep(this.#wait);
    const latest = replyInteger(await this.#run(isLatestCall, [ours])) === 1;
    if (!latest) return false;
    await this.#callback(...args);
    return true;
  }

  async #run(script: LuaScript, args: number[]): Promise<unknown> {
    try {
      return await this.#scripts.run(script, [this.#key], args);
    } catch (error) {
      throw new LockRedisError(this.#id, "debounce", error);
    }
  }
}
