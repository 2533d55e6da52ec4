import { backgroundTimer } from "../clock";
import type { EventFeed, FeedEvent, StopListening, SubscribeChannel } from "./feed-types";
import { lockEventOf } from "./lock-events";

/**
 * How long an active subscription outlives its last listener, in milliseconds: a process that waits
 * again soon (a worker that released and asks again, a fair waiter back in line) reuses it instead
 * of paying another SUBSCRIBE and stream. Short, because until it ends the stream's socket keeps a
 * process from exiting.
 */
export const LINGER_MS = 250;

type Listener = (event: FeedEvent) => void;

/** One channel's subscription, shared by every waiter of the client on that channel. */
interface SharedChannel {
  readonly listeners: Set<Listener>;
  /** Settles once the subscription is active (with its stop) or failed (undefined); never rejects. */
  readonly active: Promise<StopListening | undefined>;
  /** Aborted when the last listener leaves: tells a pending setup that nobody waits for it. */
  readonly unwanted: AbortController;
  /** While an active subscription has no listener: the timer that ends it. */
  lingering: ReturnType<typeof setTimeout> | undefined;
}

/**
 * An event feed that keeps one subscription per channel, however many waiters of the client
 * listen on it: a second waiter shares the first one's subscription, pending or active, and is told
 * "active" only once it is. An active subscription ends {@link LINGER_MS} after its last listener
 * left (a pending one at once). A failed or broken subscription is forgotten, so the next wait
 * tries afresh.
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
    const shared: SharedChannel = { listeners, active, unwanted, lingering: undefined };
    channels.set(channel, shared);
    return shared;
  };

  const end = (channel: string, shared: SharedChannel) => {
    forget(channel, shared);
    shared.unwanted.abort();
    void shared.active.then((stop) => stop?.());
  };

  const leave = (channel: string, shared: SharedChannel, listener: Listener, active: boolean) => {
    if (!shared.listeners.delete(listener) || shared.listeners.size > 0) return;
    // A setup still pending is let go at once; an active subscription lingers a little.
    if (!active || channels.get(channel) !== shared) {
      end(channel, shared);
      return;
    }
    shared.lingering = backgroundTimer(LINGER_MS, () => {
      shared.lingering = undefined;
      if (shared.listeners.size === 0) end(channel, shared);
    });
  };

  return {
    async listen(channel, onEvent, signal) {
      if (signal.aborted) return undefined;
      const shared = channels.get(channel) ?? open(channel);
      if (shared.lingering !== undefined) {
        clearTimeout(shared.lingering);
        shared.lingering = undefined;
      }
      shared.listeners.add(onEvent);
      const active = await settledOrAborted(shared.active, signal);
      if (active === undefined || signal.aborted) {
        leave(channel, shared, onEvent, false);
        return undefined;
      }
      let stopped = false;
      return () => {
        if (stopped) return;
        stopped = true;
        leave(channel, shared, onEvent, true);
      };
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
