import { channelHub } from "./channel-hub";
import type { ChannelListener, EventFeed } from "./feed-types";
import { type PubSubConnection, sharedConnection } from "./shared-connection";

/** The part of a node-redis client or cluster used for pub/sub. */
interface NodeRedisPubSub {
  duplicate(): NodeRedisPubSub;
  connect(): Promise<unknown>;
  subscribe(channel: string, listener: (message: string, channel: string) => void): Promise<unknown>;
  unsubscribe(channel: string): Promise<unknown>;
  on(event: "error" | "end", listener: () => void): unknown;
  destroy?(): unknown;
  disconnect?(): Promise<unknown>;
}

/**
 * Lock events over node-redis: one duplicated client in subscriber mode per client, connected
 * when the first lock starts waiting and destroyed when the last one stops, also mid-connect (its
 * reconnect strategy would otherwise retry forever). A connection that fails is dropped, so the next
 * wait connects afresh.
 */
export function nodeRedisFeed(client: object): EventFeed | undefined {
  if (typeof (client as Partial<NodeRedisPubSub>).duplicate !== "function") return undefined;
  const source = client as NodeRedisPubSub;
  return channelHub(
    sharedConnection((): PubSubConnection => {
      const created = source.duplicate();
      const listeners = new Map<string, ChannelListener>();
      const endAll = () => {
        for (const listener of listeners.values()) listener.ended();
        listeners.clear();
      };
      // An EventEmitter without an error listener throws. A connection error after the subscription
      // means messages may be lost while node-redis reconnects: the waiters go back to polling.
      created.on("error", endAll);
      created.on("end", endAll);
      const connected = created.connect();
      // Observed here so that a failed connect is never an unhandled rejection; subscribe reports it.
      connected.catch(() => {});
      return {
        async subscribe(channel, listener) {
          await connected;
          await created.subscribe(channel, (message) => listener.message(message));
          listeners.set(channel, listener);
        },
        unsubscribe(channel) {
          listeners.delete(channel);
          return created.unsubscribe(channel);
        },
        close() {
          try {
            // destroy() in node-redis 5 and later; disconnect() in 4.
            const closing = created.destroy ? created.destroy() : created.disconnect?.();
            if (closing instanceof Promise) closing.catch(() => {});
          } catch {
            // Already closed: nothing to release.
          }
        },
      };
    }),
  );
}
