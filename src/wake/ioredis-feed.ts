import { channelHub } from "./channel-hub";
import type { ChannelListener, EventFeed } from "./feed-types";
import { type PubSubConnection, sharedConnection } from "./shared-connection";

/** The part of an ioredis `Redis` or `Cluster` used for pub/sub. */
interface IoRedisPubSub {
  duplicate(): IoRedisPubSub;
  subscribe(channel: string): Promise<unknown>;
  unsubscribe(channel: string): Promise<unknown>;
  on(event: "message", listener: (channel: string, message: string) => void): unknown;
  on(event: "error" | "close", listener: () => void): unknown;
  disconnect(): void;
}

/**
 * Lock events over ioredis: one duplicated connection in subscriber mode per client, opened when
 * the first lock starts waiting and closed when the last one stops. ioredis queues the SUBSCRIBE
 * until the connection is up; closing it fails the queued command, so a connection that never comes
 * up holds nothing once its waiters are gone.
 */
export function ioredisFeed(client: object): EventFeed | undefined {
  if (typeof (client as Partial<IoRedisPubSub>).duplicate !== "function") return undefined;
  const source = client as IoRedisPubSub;
  return channelHub(
    sharedConnection((): PubSubConnection => {
      const created = source.duplicate();
      const listeners = new Map<string, ChannelListener>();
      // An EventEmitter without an error listener throws; connection trouble only means polling.
      created.on("error", () => {});
      created.on("message", (channel, message) => listeners.get(channel)?.message(message));
      // ioredis reconnects and subscribes again by itself, but what was published meanwhile is lost.
      created.on("close", () => {
        for (const listener of listeners.values()) listener.ended();
        listeners.clear();
      });
      return {
        async subscribe(channel, listener) {
          await created.subscribe(channel);
          listeners.set(channel, listener);
        },
        unsubscribe(channel) {
          listeners.delete(channel);
          return created.unsubscribe(channel);
        },
        close: () => created.disconnect(),
      };
    }),
  );
}
