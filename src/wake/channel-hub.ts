import type { EventFeed, FeedEvent, StopListening, SubscribeChannel } from "./feed-types";
import { lockEventOf } from "./lock-events";

type Listener = (event: FeedEvent) => void;

/** One channel's subscription, shared by every waiter of the client on that channel. */
interface SharedChannel {
  readonly listeners: Set<Listener>;
  /** Settles once the subscription is active (with its stop) or failed (undefined); never rejects. */
  readonly active: Promise<StopListening | undefined>;
  /** Aborted when the last listener leaves: tells a pending setup that nobody waits for it. */
  readonly unwanted: AbortController;
}

/**
 * An event feed that keeps one subscription per channel, however many waiters of the client
 * listen on it: a second waiter shares the first one's subscription, pending or active, and is told
 * "active" only once it is. The subscription ends when the last listener leaves, even while it is
 * still being set up. A failed or broken subscription is forgotten, so the next wait tries afresh.
 */
export function channelHub(subscribe: SubscribeChannel): EventFeed {
  const channels = new Map<string, SharedChannel>();
  const forget = (channel: string, shared: SharedChannel) => {
    if (channels.get(channel) === shared) channels.delete(channel);
  };

  const open = (channel: string): SharedChannel => {
    const listeners = new Set<Listener>();
    const unwanted = new AbortController();
    const notify = (event: FeedEvent) => {
      for (const listener of [...listeners]) listener(event);
    };
    const active = subscribe(
      channel,
      {
        message: (message) => notify(lockEventOf(message)),
        ended: () => {
          forget(channel, shared);
          notify("ended");
        },
      },
      unwanted.signal,
    ).then(
      (stop) => stop,
      () => {
        forget(channel, shared);
        return undefined;
      },
    );
    const shared: SharedChannel = { listeners, active, unwanted };
    channels.set(channel, shared);
    return shared;
  };

  const leave = (channel: string, shared: SharedChannel, listener: Listener) => {
    if (!shared.listeners.delete(listener) || shared.listeners.size > 0) return;
    forget(channel, shared);
    shared.unwanted.abort();
    void shared.active.then((stop) => stop?.());
  };

  return {
    async listen(channel, onEvent, signal) {
      if (signal.aborted) return undefined;
      const shared = channels.get(channel) ?? open(channel);
      shared.listeners.add(onEvent);
      const stop = () => leave(channel, shared, onEvent);
      const active = await settledOrAborted(shared.active, signal);
      if (active === undefined || signal.aborted) {
        stop();
        return undefined;
      }
      return stop;
    },
  };
}

/** Resolves like `work`, or with undefined as soon as `signal` aborts. */
function settledOrAborted<T>(work: Promise<T>, signal: AbortSignal): Promise<T | undefined> {
  return new Promise((resolve) => {
    const onAbort = () => resolve(undefined);
    signal.addEventListener("abort", onAbort, { once: true });
    void work.then((value) => {
      signal.removeEventListener("abort", onAbort);
      resolve(value);
    });
  });
}
