import type { ScriptArgument } from "./redis-client";
import type { ScriptRunner } from "./script-runner";
import { sendingBySha } from "./send-by-sha";

/** Keys and arguments as node-redis takes them; it accepts only strings (or buffers). */
export interface NodeRedisScriptOptions {
  keys: string[];
  arguments: string[];
}

/**
 * The part of a node-redis client (`createClient` or `createCluster`; checked against node-redis 6)
 * the lock uses. Since v4 every command exists under its Redis name and in camel case, hence
 * `EVALSHA` and `evalSha`.
 */
export interface NodeRedisClient {
  eval(script: string, options: NodeRedisScriptOptions): Promise<unknown>;
  evalSha(sha1: string, options: NodeRedisScriptOptions): Promise<unknown>;
  EVALSHA(sha1: string, options: NodeRedisScriptOptions): Promise<unknown>;
}

/**
 * Runs scripts through node-redis. A cluster client routes each command by its first key, so the
 * same call works on one server and on a cluster.
 */
export function nodeRedisRunner(client: NodeRedisClient): ScriptRunner {
  const options = (keys: string[], args: ScriptArgument[]) => ({ keys, arguments: args.map(String) });
  return sendingBySha({
    evalsha: (sha1, keys, args) => client.evalSha(sha1, options(keys, args)),
    eval: (source, keys, args) => client.eval(source, options(keys, args)),
  });
}
