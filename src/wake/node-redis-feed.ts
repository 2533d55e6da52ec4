import { ChannelListeners } from "./channel-listeners";
import type { ReleaseFeed } from "./release-feed";

/** The part of a node-redis client or cluster used for pub/sub. */
interface NodeRedisPubSub {
  duplicate(): NodeRedisPubSub;
  connect(): Promise<unknown>;
  subscribe(channel: string, listener: (message: string, channel: string) => void): Promise<unknown>;
  unsubscribe(channel: string): Promise<unknown>;
  on(event: "error", listener: (error: Error) => void): unknown;
  close?(): Promise<unknown>;
  quit?(): Promise<unknown>;
}

/**
 * Release feed over node-redis: one duplicated client in subscriber mode per client, connected
 * when the first lock starts waiting and closed when the last one stops.
 */
export function nodeRedisFeed(client: object): ReleaseFeed | undefined {
  if (typeof (client as Partial<NodeRedisPubSub>).duplicate !== "function") return undefined;
  const source = client as NodeRedisPubSub;
  const listeners = new ChannelListeners();
  let subscriber: Promise<NodeRedisPubSub> | undefined;

  const connection = (): Promise<NodeRedisPubSub> => {
    subscriber ??= (async () => {
      const created = source.duplicate();
      // An EventEmitter without an error listener throws; connection trouble only means polling.
      created.on("error", () => {});
      await created.connect();
      return created;
    })();
    return subscriber;
  };
  const closeIfIdle = () => {
    if (listeners.channels > 0 || !subscriber) return;
    const closing = subscriber;
    subscriber = undefined;
    closing.then((created) => (created.close ?? created.quit)?.call(created)).catch(() => {});
  };

  return {
    // A subscription still being set up when the wait ends is stopped by the caller once it resolves.
    async listen(channel, onEvent) {
      const first = listeners.add(channel, onEvent);
      const stop = () => {
        if (listeners.remove(channel, onEvent)) {
          subscriber?.then((created) => created.unsubscribe(channel)).catch(() => {});
          closeIfIdle();
        }
      };
      try {
        if (first)
          await (await connection()).subscribe(channel, (message) => listeners.notify(channel, message));
        return stop;
      } catch {
        stop();
        return undefined;
      }
    },
  };
}
