// Where the demo's Redis comes from: the server named by the Upstash environment variables, or
// a local stack (a throwaway redis-server behind the Upstash REST proxy) started for the run.

import { Redis } from "@upstash/redis";
import { startLocalStack } from "../../stack/local-stack";

export interface Backend {
  url: string;
  token: string;
  /** For the header line, e.g. "local stack http://127.0.0.1:40123 (redis-server redis://...)". */
  description: string;
  /** True when the demo started the server and it disappears with `close()`. */
  throwaway: boolean;
  /** Stops what the demo started; nothing for a server it was given. Safe to call twice. */
  close(): Promise<void>;
}

export async function openBackend(env: NodeJS.ProcessEnv): Promise<Backend> {
  const url = env.UPSTASH_REDIS_REST_URL;
  const token = env.UPSTASH_REDIS_REST_TOKEN;
  if (url && token) {
    return { url, token, description: url, throwaway: false, close: async () => {} };
  }
  if (url || token) {
    throw new Error("set both UPSTASH_REDIS_REST_URL and UPSTASH_REDIS_REST_TOKEN, or neither");
  }
  const stack = await startLocalStack();
  return {
    url: stack.url,
    token: stack.token,
    description: `local stack ${stack.url} (redis-server ${stack.redisUrl})`,
    throwaway: true,
    close: () => stack.stop(),
  };
}

export function clientFor(backend: Backend): Redis {
  return new Redis({ url: backend.url, token: backend.token, enableTelemetry: false });
}

/** The keys one run uses; every one of them contains the run's random id. */
export interface RunKeys {
  lockId: string;
  occupancyKey: string;
  /** SCAN pattern matching the lock, the occupancy counter and the receipts the lock writes. */
  pattern: string;
}

/**
 * Keys unique to this run, so the demo can share a server with anything else. The id is a
 * Redis hash tag: the lock keeps its receipts next to the lock key, i.e. under the same prefix.
 */
export function runKeys(): RunKeys {
  const run = crypto.randomUUID().slice(0, 8);
  const prefix = `demo:{${run}}`;
  return { lockId: `${prefix}:lock`, occupancyKey: `${prefix}:occupancy`, pattern: `${prefix}:*` };
}

/** SCAN calls spent looking for leftovers on a server the demo does not own, at most. */
const MAX_SCAN_CALLS = 50;

/**
 * Deletes every key of the run and reports whether the lock key was still there, which would
 * mean some worker never released it. Never FLUSHes: the server may hold other people's data.
 */
export async function deleteRunKeys(
  redis: Redis,
  keys: RunKeys,
): Promise<{ lockLeft: boolean; deleted: number }> {
  const lockLeft = (await redis.exists(keys.lockId)) > 0;
  const found = new Set([keys.lockId, keys.occupancyKey]);
  let cursor = "0";
  for (let call = 0; call < MAX_SCAN_CALLS; call++) {
    const [next, batch] = await redis.scan(cursor, { match: keys.pattern, count: 1000 });
    for (const key of batch) found.add(key);
    cursor = String(next);
    if (cursor === "0") break;
  }
  // Receipts not found within the SCAN budget expire on their own (they carry a TTL).
  const deleted = await redis.del(...found);
  return { lockLeft, deleted };
}
