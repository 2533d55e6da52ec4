import type { ScriptArgument } from "./redis-client";
import type { ScriptRunner } from "./script-runner";
import { sendingBySha } from "./send-by-sha";

/**
 * The part of an ioredis `Redis` or `Cluster` the lock uses (checked against ioredis 6). Its `eval` and
 * `evalsha` take the key count and then keys and arguments spread, unlike the generic shape.
 */
export interface IoRedisClient {
  /** Set by both ioredis classes; with `defineCommand`, what tells ioredis apart from other clients. */
  readonly isCluster: boolean;
  defineCommand(name: string, definition: { lua: string; numberOfKeys?: number }): void;
  eval(script: string, numkeys: number, ...keysAndArgs: string[]): Promise<unknown>;
  evalsha(sha1: string, numkeys: number, ...keysAndArgs: string[]): Promise<unknown>;
}

/**
 * Runs scripts through ioredis. A `Cluster` routes EVALSHA and EVAL by the slot of their first
 * key, so the same call works on one server and on a cluster.
 */
export function ioredisRunner(client: IoRedisClient): ScriptRunner {
  const flat = (keys: string[], args: ScriptArgument[]) => [...keys, ...args.map(String)];
  return sendingBySha({
    evalsha: (sha1, keys, args) => client.evalsha(sha1, keys.length, ...flat(keys, args)),
    eval: (source, keys, args) => client.eval(source, keys.length, ...flat(keys, args)),
  });
}
