import { detectClient } from "../client/detect";
import type { EventFeed } from "./feed-types";
import { ioredisFeed } from "./ioredis-feed";
import { nodeRedisFeed } from "./node-redis-feed";
import { upstashFeed } from "./upstash-feed";

const feeds = new WeakMap<object, EventFeed | null>();

/**
 * The lock event feed of a client, shared by every lock using that client, or undefined when the
 * client cannot subscribe (then waiters only poll).
 */
export function eventFeedFor(client: unknown): EventFeed | undefined {
  if (typeof client !== "object" || client === null) return undefined;
  let feed = feeds.get(client);
  if (feed === undefined) {
    feed = createFeed(client) ?? null;
    feeds.set(client, feed);
  }
  return feed ?? undefined;
}

function createFeed(client: object): EventFeed | undefined {
  const detected = detectClient(client);
  if (!detected) return undefined;
  switch (detected.kind) {
    case "ioredis":
      return ioredisFeed(client);
    case "node-redis":
      return nodeRedisFeed(client);
    case "eval":
      return upstashFeed(client);
  }
}
