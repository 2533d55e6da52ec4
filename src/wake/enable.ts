import { isQuorum, type QuorumSpec } from "../options";
import { clientKind, type RedisClient } from "../redis/client";
import { describeValue } from "../validate";
import type { ChannelFeed } from "./feed";
import { registerFeed } from "./feeds";
import { channelHub } from "./hub";
import { type PubSubClient, tcpSubscriber } from "./tcp";
import { upstashFeedOf } from "./upstash";

/**
 * Lets releases wake waits on this client's locks: a wait spanning several polls subscribes, then polls only
 * as a safety net (every `retry.maxDelay`, and once `retry.delay`, 20 ms at least, before its last try), and
 * retries within a round trip of a release. Call once per client, before or after making locks; a quorum
 * enables each member. `@upstash/redis`: one SSE stream (one billed SUBSCRIBE) per waiting lock; ioredis
 * and node-redis: one extra connection (a subscriber-mode duplicate), open while waits need it. `FairLock`
 * and fair semaphores wake their own waiters on `@upstash/redis` without it.
 * @example
 * const redis = Redis.fromEnv();
 * enableWakeUps(redis);
 * const lock = new Lock({ id: "nightly-report", redis });
 * await lock.acquire({ timeout: 30_000 }); // woken as soon as the holder releases
 * @throws {TypeError} when `redis` is no client that can subscribe.
 */
export function enableWakeUps(redis: RedisClient | QuorumSpec): void {
  if (isQuorum(redis)) {
    for (const member of redis.clients) enableWakeUps(member);
    return;
  }
  // @upstash/redis shares its feed with its fair locks; a feed opens nothing until a wait listens.
  const feed = upstashFeedOf(redis) ?? tcpFeedOf(redis);
  if (!feed) {
    throw new TypeError(
      `Expected \`redis\` to be an @upstash/redis, ioredis or node-redis client, got ${describeValue(redis)}`,
    );
  }
  registerFeed(redis, feed);
}

/** An ioredis or node-redis client's feed, on a subscriber-mode duplicate; undefined for any other client. */
function tcpFeedOf(redis: RedisClient): ChannelFeed | undefined {
  const kind = clientKind(redis);
  const client = redis as unknown as PubSubClient;
  const pubSub = (kind === "ioredis" || kind === "node-redis") && typeof client.duplicate === "function";
  return pubSub ? channelHub(tcpSubscriber(client, kind === "ioredis")) : undefined;
}
