import { describeValue } from "../describe-value";
import type { LuaScript } from "../scripts/lua-script";
import type { EvalClient, ScriptArgument } from "./redis-client";

/** Runs the library's Lua scripts on one Redis client. */
export interface ScriptRunner {
  run(script: LuaScript, keys: string[], args: ScriptArgument[]): Promise<unknown>;
}

function isNoScript(error: unknown): boolean {
  return error instanceof Error && error.message.toLowerCase().includes("noscript");
}

/**
 * Wraps a client with `eval(script, keys, args)`. EVALSHA sends 40 characters instead of the
 * whole script; Redis answers NOSCRIPT after a restart or SCRIPT FLUSH, and the script is then
 * sent once in full, which also caches it for the next call.
 */
export function scriptRunnerFor(client: EvalClient): ScriptRunner {
  const evalsha = client.evalsha;
  if (typeof evalsha !== "function") {
    return { run: (script, keys, args) => client.eval(script.source, keys, args) };
  }
  return {
    async run(script, keys, args) {
      try {
        return await evalsha.call(client, script.sha1, keys, args);
      } catch (error) {
        if (!isNoScript(error)) throw error;
        return client.eval(script.source, keys, args);
      }
    },
  };
}

/** Throws a TypeError unless `value` looks like a client the lock can drive. */
export function assertEvalClient(value: unknown): asserts value is EvalClient {
  const hasEval =
    typeof value === "object" && value !== null && typeof (value as { eval?: unknown }).eval === "function";
  if (!hasEval) {
    throw new TypeError(
      `Expected \`redis\` to be a Redis client with an \`eval(script, keys, args)\` method, such as \`Redis.fromEnv()\` from @upstash/redis, got ${describeValue(value)}`,
    );
  }
}
