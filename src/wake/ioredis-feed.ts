import { ChannelListeners } from "./channel-listeners";
import type { ReleaseFeed } from "./release-feed";

/** The part of an ioredis `Redis` or `Cluster` used for pub/sub. */
interface IoRedisPubSub {
  duplicate(): IoRedisPubSub;
  subscribe(channel: string): Promise<unknown>;
  unsubscribe(channel: string): Promise<unknown>;
  on(event: "message", listener: (channel: string, message: string) => void): unknown;
  on(event: "error", listener: (error: Error) => void): unknown;
  disconnect(): void;
}

/**
 * Release feed over ioredis: one duplicated connection in subscriber mode per client, opened
 * when the first lock starts waiting and closed when the last one stops.
 */
export function ioredisFeed(client: object): ReleaseFeed | undefined {
  if (typeof (client as Partial<IoRedisPubSub>).duplicate !== "function") return undefined;
  const source = client as IoRedisPubSub;
  const listeners = new ChannelListeners();
  let subscriber: IoRedisPubSub | undefined;

  const connection = (): IoRedisPubSub => {
    if (subscriber) return subscriber;
    const created = source.duplicate();
    // An EventEmitter without an error listener throws; connection trouble only means polling.
    created.on("error", () => {});
    created.on("message", (channel, message) => listeners.notify(channel, message));
    subscriber = created;
    return created;
  };
  const closeIfIdle = () => {
    if (listeners.channels > 0 || !subscriber) return;
    subscriber.disconnect();
    subscriber = undefined;
  };

  return {
    // A subscription still being set up when the wait ends is stopped by the caller once it resolves.
    async listen(channel, onEvent) {
      const first = listeners.add(channel, onEvent);
      const stop = () => {
        if (listeners.remove(channel, onEvent)) {
          subscriber?.unsubscribe(channel).catch(() => {});
          closeIfIdle();
        }
      };
      try {
        if (first) await connection().subscribe(channel);
        return stop;
      } catch {
        stop();
        return undefined;
      }
    },
  };
}
