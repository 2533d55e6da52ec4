import type { ChannelFeed } from "./feed";

const feeds = new WeakMap<object, ChannelFeed>();

/** The feed `enableWakeUps` gave `client`, shared by every lock on it; undefined: waits poll. */
export function feedFor(client: unknown): ChannelFeed | undefined {
  return typeof client === "object" && client !== null ? feeds.get(client) : undefined;
}

/** Gives `client` its feed; a client enabled again keeps its first. */
export function registerFeed(client: object, feed: ChannelFeed): void {
  if (!feeds.has(client)) feeds.set(client, feed);
}
