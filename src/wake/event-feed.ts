import { detectClient } from "../client/detect";
import { ioredisFeed } from "./ioredis-feed";
import { nodeRedisFeed } from "./node-redis-feed";
import type { LockEvent } from "./release-channel";
import { upstashFeed } from "./upstash-feed";

/** Stops listening; never rejects. */
export type StopListening = () => void;

/**
 * Lock event announcements of one client. `listen` resolves once the subscription is active (so no
 * event after that moment is missed), or with undefined when it could not be set up, in which
 * case the waiter simply keeps polling.
 */
export interface ReleaseFeed {
  /** @param signal aborts a subscription still being set up: it then resolves undefined. */
  listen(
    channel: string,
    onEvent: (event: LockEvent) => void,
    signal: AbortSignal,
  ): Promise<StopListening | undefined>;
}

const feeds = new WeakMap<object, ReleaseFeed | null>();

/**
 * The release feed of a client, shared by every lock using that client, or undefined when the
 * client cannot subscribe (then waiters only poll).
 */
export function releaseFeedFor(client: unknown): ReleaseFeed | undefined {
  if (typeof client !== "object" || client === null) return undefined;
  let feed = feeds.get(client);
  if (feed === undefined) {
    feed = createFeed(client) ?? null;
    feeds.set(client, feed);
  }
  return feed ?? undefined;
}

function createFeed(client: object): ReleaseFeed | undefined {
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
