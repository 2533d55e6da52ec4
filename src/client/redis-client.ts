import type { IoRedisClient } from "./ioredis";
import type { NodeRedisClient } from "./node-redis";

/** A value a script argument may take; numbers are sent as their decimal text. */
export type ScriptArgument = string | number;

/**
 * The generic client shape: anything with `eval(script, keys, args)` that resolves to the
 * script's reply, such as `@upstash/redis`'s `Redis` (`Redis.fromEnv()`, `new Redis({ url, token })`).
 * When the client also has `evalsha(sha1, keys, args)`, scripts are sent by their SHA-1 and only
 * fall back to the full text when Redis answers NOSCRIPT.
 */
export interface EvalClient {
  eval(script: string, keys: string[], args: ScriptArgument[]): Promise<unknown>;
  evalsha?(sha1: string, keys: string[], args: ScriptArgument[]): Promise<unknown>;
}

/**
 * Every client the lock accepts, passed as is: `@upstash/redis` or any other {@link EvalClient},
 * an ioredis `Redis` or `Cluster`, or a node-redis client from `createClient` or `createCluster`.
 * The kind is recognised by its shape; no client library is imported.
 */
export type RedisClient = EvalClient | IoRedisClient | NodeRedisClient;
