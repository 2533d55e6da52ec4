import type { DetectedClient, EvalClient, IoRedisClient, NodeRedisClient } from "./types";

function hasMethods(value: object, names: readonly string[]): boolean {
  return names.every((name) => typeof (value as Record<string, unknown>)[name] === "function");
}

/**
 * Tells which kind of client `value` is from its shape, without importing any client library.
 * All three kinds have an `eval` method, with three different signatures, so the specific kinds
 * are tried first:
 *
 * - ioredis (`Redis`, `Cluster`): a boolean `isCluster` and `defineCommand`, found on no other client.
 * - node-redis (`createClient`, `createCluster`): commands under their Redis name and in camel case,
 *   `EVALSHA` and `evalSha`; the other clients spell it `evalsha`.
 * - anything else with `eval`, `@upstash/redis` included: called as `eval(script, keys, args)`.
 *
 * @returns undefined when `value` has no usable `eval`.
 */
export function detectClient(value: unknown): DetectedClient | undefined {
  if (typeof value !== "object" || value === null || !hasMethods(value, ["eval"])) return undefined;
  const isCluster = (value as { isCluster?: unknown }).isCluster;
  if (typeof isCluster === "boolean" && hasMethods(value, ["defineCommand", "evalsha"])) {
    return { kind: "ioredis", client: value as IoRedisClient };
  }
  if (hasMethods(value, ["evalSha", "EVALSHA"])) {
    return { kind: "node-redis", client: value as NodeRedisClient };
  }
  return { kind: "eval", client: value as EvalClient };
}
