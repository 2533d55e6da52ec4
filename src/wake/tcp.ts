import type { ChannelListener, SubscribeChannel } from "./feed";

/** The pub/sub parts of an ioredis or node-redis client, as a duplicate of it uses them. */
export interface PubSubClient {
  duplicate(): PubSubClient;
  subscribe(channel: string, listener?: (message: string, channel: string) => void): Promise<unknown>;
  unsubscribe(channel: string): Promise<unknown>;
  on(event: string, listener: (...args: never[]) => void): unknown;
  connect?(): Promise<unknown>;
  disconnect?(): unknown;
  destroy?(): unknown;
}

interface Link {
  readonly client: PubSubClient;
  readonly channels: Map<string, Set<ChannelListener>>;
  readonly connected: Promise<unknown>;
  users: number; // waits and subscriptions using it: closed when none is left
  dead: boolean; // the connection dropped: nothing is sent on it again, nor is it reused
}

/**
 * One duplicated connection in subscriber mode, opened on first use, closed once unused (even mid-connect).
 * Listeners count per channel, so one wait's end never unsubscribes another's. A dropped connection is closed
 * for good and its listeners hear "ended" (messages meanwhile are lost): the next wait opens a fresh one.
 */
export function tcpSubscriber(source: PubSubClient, ioredis: boolean): SubscribeChannel {
  let current: Link | undefined;

  const close = (link: Link) => {
    link.dead = true;
    if (current === link) current = undefined;
    try {
      // ioredis: disconnect(); node-redis 5 and later: destroy(); 4: disconnect().
      const closing = link.client.destroy ? link.client.destroy() : link.client.disconnect?.();
      if (closing instanceof Promise) closing.catch(() => {});
    } catch {
      // Already closed.
    }
  };
  const drop = (link: Link) => {
    if (link.dead) return;
    close(link);
    for (const listeners of link.channels.values()) for (const listener of listeners) listener.ended();
    link.channels.clear();
  };
  const open = (): Link => {
    const client = source.duplicate();
    const link: Link = { client, channels: new Map(), users: 0, dead: false, connected: Promise.resolve() };
    client.on("error", () => drop(link)); // unlistened, an error throws; a drop may lose messages
    client.on(ioredis ? "close" : "end", () => drop(link));
    if (ioredis) {
      client.on("message", (channel: string, message: string) => {
        for (const listener of link.channels.get(channel) ?? []) listener.message(message);
      });
    } else {
      const connected = client.connect?.() ?? Promise.resolve();
      connected.catch(() => {});
      (link as { connected: Promise<unknown> }).connected = connected;
    }
    return link;
  };

  return async (channel, listener, unwanted) => {
    const link = current ?? open();
    current = link;
    link.users += 1;
    let using = true;
    const letGo = () => {
      if (!using) return;
      using = false;
      link.users -= 1;
      if (link.users === 0) close(link);
    };
    unwanted.addEventListener("abort", letGo, { once: true });
    try {
      await link.connected;
      const listeners = link.channels.get(channel);
      if (listeners) listeners.add(listener);
      else {
        await (ioredis
          ? link.client.subscribe(channel)
          : link.client.subscribe(channel, (message) => {
              for (const each of link.channels.get(channel) ?? []) each.message(message);
            }));
        if (link.dead || !using) throw new Error("the subscriber connection closed");
        link.channels.set(channel, new Set([...(link.channels.get(channel) ?? []), listener]));
      }
    } catch (error) {
      letGo();
      throw error;
    } finally {
      unwanted.removeEventListener("abort", letGo);
    }
    return () => {
      const listeners = link.channels.get(channel);
      if (listeners?.delete(listener) && listeners.size === 0 && !link.dead) {
        link.channels.delete(channel);
        link.client.unsubscribe(channel).catch(() => {});
      }
      letGo();
    };
  };
}
