import { backgroundTimer, monotonicNow } from "../clock";
import { eventChannel } from "../keys";
import type { ChannelFeed, FeedEvent, Listening, LockEvents, SubscribeChannel } from "./feed";
import { SubscribedWaiter } from "./subscribed";

/** Ms an active subscription outlives its last listener, to be reused; short: it keeps the process alive. */
export const LINGER_MS = 250;

/** Lock keys whose channel names are kept, the most recently used: a server locking per user stays bounded. */
const NAMED_KEYS_KEPT = 1_000;

type Listener = (event: FeedEvent) => void;

interface Shared {
  readonly listeners: Set<Listener>;
  readonly ready: Promise<(() => void) | undefined>; // how to stop once active, or undefined; never rejects
  readonly unwanted: AbortController; // aborted once nobody wants it, pending or active
  since: number | undefined; // monotonic time it became active; undefined while pending
  linger: (() => void) | undefined; // while active with no listener: cancels the timer that ends it
}

/** A subscription per channel until its last listener leaves (LINGER_MS later if active), fails or breaks. */
export function channelHub(subscribe: SubscribeChannel): ChannelFeed {
  const channels = new Map<string, Shared>();
  const forget = (channel: string, shared: Shared) => {
    if (channels.get(channel) === shared) channels.delete(channel);
  };
  const end = (channel: string, shared: Shared) => {
    forget(channel, shared);
    shared.unwanted.abort();
    void shared.ready.then((stop) => stop?.());
  };

  const open = (channel: string): Shared => {
    const unwanted = new AbortController();
    const listeners = new Set<Listener>();
    const notify = (event: FeedEvent) => {
      for (const listener of [...listeners]) listener(event);
    };
    const shared: Shared = {
      listeners,
      unwanted,
      since: undefined,
      linger: undefined,
      ready: subscribe(
        channel,
        {
          message: (message) => notify(lockEventOf(message)),
          ended: () => {
            if (channels.get(channel) !== shared) return;
            forget(channel, shared);
            notify("ended");
          },
        },
        unwanted.signal,
      ).then(
        (stop) => {
          shared.since = monotonicNow();
          return stop;
        },
        () => {
          forget(channel, shared);
          return undefined;
        },
      ),
    };
    channels.set(channel, shared);
    return shared;
  };

  const leave = (channel: string, shared: Shared, listener: Listener) => {
    if (!shared.listeners.delete(listener) || shared.listeners.size > 0) return;
    if (shared.since === undefined || channels.get(channel) !== shared) {
      end(channel, shared);
      return;
    }
    // A listener joining cancels the timer: when it fires, there is none.
    shared.linger = backgroundTimer(LINGER_MS, () => end(channel, shared));
  };

  const eventsOf = (key: string): LockEvents => {
    let channel: string | undefined; // the key's SHA-1, named on first use (Web Crypto is async)
    const naming = eventChannel(key).then((name) => {
      channel = name;
      return name;
    });
    const events: LockEvents = {
      waiter: (plan) => new SubscribedWaiter(events, plan),
      active: () => channel !== undefined && feed.active(channel),
      cost: () => feed.cost(channel),
      // No await once named: a wait joining an active subscription is covered from its first try. An aborted
      // `signal` is the feed's to refuse.
      listen: (onEvent, signal) =>
        channel !== undefined
          ? feed.listen(channel, onEvent, signal)
          : naming.then((name) => (name === undefined ? undefined : feed.listen(name, onEvent, signal))),
    };
    return events;
  };
  const byKey = new Map<string, LockEvents>(); // in order of last use
  const feed: ChannelFeed = {
    lockEvents(key) {
      const events = byKey.get(key) ?? eventsOf(key);
      byKey.delete(key);
      byKey.set(key, events);
      if (byKey.size > NAMED_KEYS_KEPT) byKey.delete(byKey.keys().next().value as string);
      return events;
    },
    active: (channel) => channels.get(channel)?.since !== undefined,
    cost: (channel) =>
      channel !== undefined && channels.has(channel) ? 0 : (subscribe.cost?.(channel) ?? 1),
    async listen(channel, onEvent, signal): Promise<Listening | undefined> {
      if (signal.aborted) return undefined;
      const shared = channels.get(channel) ?? open(channel);
      shared.linger?.();
      shared.linger = undefined;
      shared.listeners.add(onEvent);
      const attachedAt = monotonicNow();
      const stop = await new Promise<(() => void) | undefined>((resolve) => {
        const onAbort = () => resolve(undefined);
        signal.addEventListener("abort", onAbort, { once: true });
        void shared.ready.then((ready) => {
          signal.removeEventListener("abort", onAbort);
          resolve(ready);
        });
      });
      if (stop === undefined || signal.aborted || channels.get(channel) !== shared) {
        leave(channel, shared, onEvent);
        return undefined;
      }
      return {
        since: Math.max(attachedAt, shared.since ?? attachedAt), // from attaching, or activation if later
        stop: () => leave(channel, shared, onEvent), // again: a no-op, its listener already gone
      };
    },
  };
  return feed;
}

/** Reads a channel message as a lock event; anything unknown counts as a release (the safe guess: retry). */
function lockEventOf(message: string): FeedEvent {
  return /^(acquired$|acquired:|granted:)/.test(message) ? (message as FeedEvent) : "released";
}
