import { isQuorum, type QuorumSpec } from "../options";
import { clientKind, type RedisClient } from "../redis/client";
import { describeValue } from "../validate";
import { registerFeed } from "./feeds";
import { channelHub } from "./hub";
import { type PubSubClient, tcpSubscriber } from "./tcp";
import { enableUpstashWakeUps, isUpstashHttp } from "./upstash";

/**
 * Lets waits on locks over this client be woken by releases instead of only polling: a wait that
 * would span several polls subscribes to its lock's announcements, then polls only now and then
 * (every `retry.maxDelay`), and retries within a round trip of a release. Call it once per client,
 * before or after making locks on it; a quorum enables each member. With `@upstash/redis` a
 * subscription is a server-sent-events stream (one billed SUBSCRIBE) per lock that waits; with
 * ioredis and node-redis, one extra connection (a duplicate of the client in subscriber mode),
 * opened when a wait first needs it and closed once no wait does. `FairLock` and fair semaphores
 * wake their own waiters on `@upstash/redis` without it.
 *
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
  const kind = clientKind(redis);
  if (isUpstashHttp(redis)) enableUpstashWakeUps(redis);
  else if (
    (kind === "ioredis" || kind === "node-redis") &&
    typeof (redis as Partial<PubSubClient>).duplicate === "function"
  ) {
    registerFeed(redis, () =>
      channelHub(tcpSubscriber(redis as unknown as PubSubClient, kind === "ioredis")),
    );
  } else {
    throw new TypeError(
      `Expected \`redis\` to be an @upstash/redis, ioredis or node-redis client, got ${describeValue(redis)}`,
    );
  }
}
