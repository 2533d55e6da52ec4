import type { ChannelListener, StopListening, SubscribeChannel } from "./feed-types";

/** A connection in subscriber mode, as the ioredis and node-redis feeds open it. */
export interface PubSubConnection {
  /**
   * Resolves once the server confirmed the subscription; rejects if the connection cannot get
   * there. The listener hears "ended" if the connection drops afterwards (messages may be missed).
   */
  subscribe(channel: string, listener: ChannelListener): Promise<void>;
  unsubscribe(channel: string): Promise<unknown>;
  /** Closes the connection at any stage, connecting included; fails whatever is still queued on it. */
  close(): void;
}

/** The open (or opening) connection and how many subscriptions use or wait for it. */
interface Link {
  readonly connection: PubSubConnection;
  users: number;
}

/**
 * Subscriptions of one client over a single extra connection (a TCP client in subscriber mode can
 * run nothing else): opened when the first channel is wanted, closed when the last one is let go,
 * including while it is still connecting. A connection that fails, to connect or to subscribe, is
 * dropped, so the next wait opens a fresh one instead of reusing a broken one.
 *
 * @param open starts connecting at once and returns without waiting.
 */
export function sharedConnection(open: () => PubSubConnection): SubscribeChannel {
  let current: Link | undefined;

  const letGo = (link: Link) => {
    link.users -= 1;
    if (link.users > 0) return;
    if (current === link) current = undefined;
    link.connection.close();
  };

  return async (channel, listener, signal) => {
    const link = current ?? { connection: open(), users: 0 };
    current = link;
    link.users += 1;
    let held = true;
    const release = () => {
      if (!held) return;
      held = false;
      letGo(link);
    };
    // Nobody waits any more: stop holding the connection open, even one that never connects.
    signal.addEventListener("abort", release, { once: true });
    try {
      await link.connection.subscribe(channel, listener);
    } catch (error) {
      if (current === link) current = undefined;
      release();
      throw error;
    } finally {
      signal.removeEventListener("abort", release);
    }
    const stop: StopListening = () => {
      link.connection.unsubscribe(channel).catch(() => {});
      release();
    };
    return stop;
  };
}
