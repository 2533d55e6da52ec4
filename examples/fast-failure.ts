// Clients set up to fail fast when Redis is down, for locks on them. Without such settings the lock
// still bounds each call by about a lease, but the client's own retries and queues fill that time.
// #region readme
import { Redis as UpstashRedis } from "@upstash/redis";
import { Redis as IORedis } from "ioredis";
import { createClient } from "redis";

// @upstash/redis re-sends a failed request 5 times by default (about 4.3 s); here it does not.
export function upstashClient(url: string, token: string): UpstashRedis {
  return new UpstashRedis({ url, token, retry: { retries: 0 } });
}

export async function ioredisClient(url: string): Promise<IORedis> {
  const redis = new IORedis(url, {
    enableOfflineQueue: false, // fail at once while disconnected, instead of queueing the command
    maxRetriesPerRequest: 1, // default 20 reconnections before a command fails
    connectTimeout: 2_000, // ms
    commandTimeout: 1_000, // ms; a lock's scripts take well under that
    lazyConnect: true, // connect below: without the offline queue, a command sent before that fails
  });
  await redis.connect();
  return redis;
}

export async function nodeRedisClient(url: string) {
  return createClient({
    url,
    disableOfflineQueue: true, // fail at once while disconnected, instead of queueing the command
    socket: {
      connectTimeout: 2_000, // ms
      reconnectStrategy: (retries) => Math.min(100 * 2 ** retries, 2_000), // ms before reconnecting
    },
  })
    .on("error", () => {}) // node-redis emits connection errors; the lock reports its own failures
    .connect();
}
// #endregion
