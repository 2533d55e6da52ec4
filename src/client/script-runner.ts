import { describeValue } from "../describe-value";
import type { LuaScript } from "../scripts/lua-script";
import { detectClient } from "./detect";
import { evalClientRunner } from "./generic";
import { ioredisRunner } from "./ioredis";
import { nodeRedisRunner } from "./node-redis";
import type { RedisClient, ScriptArgument } from "./redis-client";
import type { ScriptReply } from "./reply";

/** Runs the library's Lua scripts on one Redis client, whatever its kind. */
export interface ScriptRunner {
  run(script: LuaScript, keys: string[], args: ScriptArgument[]): Promise<ScriptReply>;
}

function unusableClient(value: unknown): TypeError {
  return new TypeError(
    `Expected \`redis\` to be a Redis client: @upstash/redis (such as \`Redis.fromEnv()\`), ioredis, node-redis, or an object with an \`eval(script, keys, args)\` method, got ${describeValue(value)}`,
  );
}

// One runner per client, shared by every Lock and Debounce on it: applications create many locks
// over one client, and a runner per lock was most of a lock's memory.
const runners = new WeakMap<object, ScriptRunner>();

/**
 * The runner for `client`, chosen by its shape. Scripts go by SHA-1 with a fallback to the full
 * text (when the client can send EVALSHA), and replies come back as numbers, lists and null.
 * @throws {TypeError} when `client` is not a usable Redis client.
 */
export function scriptRunnerFor(client: RedisClient): ScriptRunner {
  let runner = runners.get(client);
  if (runner === undefined) {
    runner = createRunner(client);
    runners.set(client, runner);
  }
  return runner;
}

function createRunner(client: RedisClient): ScriptRunner {
  const detected = detectClient(client);
  if (detected === undefined) throw unusableClient(client);
  switch (detected.kind) {
    case "ioredis":
      return ioredisRunner(detected.client);
    case "node-redis":
      return nodeRedisRunner(detected.client);
    case "eval":
      return evalClientRunner(detected.client);
  }
}

/** Throws a TypeError unless `value` looks like a client the lock can drive. */
export function assertEvalClient(value: unknown): asserts value is RedisClient {
  if (detectClient(value) === undefined) throw unusableClient(value);
}
