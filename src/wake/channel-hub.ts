import { backgroundTimer, monotonicNow } from "../clock";
import type { EventFeed, FeedEvent, LockEvent, StopListening, SubscribeChannel } from "./feed-types";
import { lockEventOf } from "./lock-events";

/**
 * How long an active subscription outlives its last listener, in milliseconds: a process that waits
 * again soon (a worker that released and asks again, a fair waiter back in line) reuses it instead
 * of paying another SUBSCRIBE and stream. Short, because until it ends the stream's socket keeps a
 * process from exiting.
 */
export const LINGER_MS = 250;

/**
 * How long, in milliseconds, and how many of a channel's latest events it keeps for replay: enough
 * for a waiter that subscribes a round trip or two after its try (see {@link EventFeed.listen}).
 */
const REPLAY_MS = 2_000;
const REPLAY_EVENTS = 32;

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
  /**
   * Monotonic time from which `recent` holds every event received: when the subscription became
   * active, later the receipt of the newest event dropped from `recent`. Undefined while pending.
   */
  keptFrom: number | undefined;
  /** The latest events received, oldest first, with the monotonic time each arrived. */
  readonly recent: { at: number; event: LockEvent }[];
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
    const keep = (event: LockEvent) => {
      const at = monotonicNow();
      const { recent } = shared;
      recent.push({ at, event });
      while (recent.length > REPLAY_EVENTS || (recent[0] as { at: number }).at < at - REPLAY_MS) {
        shared.keptFrom = recent.shift()?.at;
      }
    };
    const active = subscribe(
      channel,
      {
        message: (message) => {
          const event = lockEventOf(message);
          keep(event);
          notify(event);
        },
        ended: () => {
          forget(channel, shared);
          notify("ended");
        },
      },
      unwanted.signal,
    ).then(
      (stop) => {
        shared.keptFrom = monotonicNow();
        return stop;
      },
      () => {
        forget(channel, shared);
        return undefined;
      },
    );
    const shared: SharedChannel = {
      listeners,
      active,
      unwanted,
      lingering: undefined,
      keptFrom: undefined,
      recent: [],
    };
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
    async listen(channel, onEvent, signal, replaySince) {
      if (signal.aborted) return undefined;
      const shared = channels.get(channel) ?? open(channel);
      if (shared.lingering !== undefined) {
        clearTimeout(shared.lingering);
        shared.lingering = undefined;
      }
      shared.listeners.add(onEvent);
      const attachedAt = monotonicNow();
      // Replayed at once, before any later event reaches the listener live, so it hears them in order.
      const keptAtAttach = replay(shared, onEvent, replaySince);
      const active = await settledOrAborted(shared.active, signal);
      if (active === undefined || signal.aborted) {
        leave(channel, shared, onEvent, false);
        return undefined;
      }
      let stopped = false;
      const stop = () => {
        if (stopped) return;
        stopped = true;
        leave(channel, shared, onEvent, true);
      };
      // Covered from `replaySince` (or the attachment) if the kept events reach back that far; a
      // subscription that was still pending covers from when it became active.
      const keptFrom = keptAtAttach ?? shared.keptFrom ?? attachedAt;
      return { stop, coveredFrom: Math.max(replaySince ?? attachedAt, keptFrom) };
    },
  };
}

/**
 * Hands `onEvent` the kept events received since `since` (none without it), and returns since when
 * the kept events are complete: undefined while the subscription is pending (nothing kept yet).
 */
function replay(shared: SharedChannel, onEvent: Listener, since: number | undefined): number | undefined {
  if (since !== undefined) {
    // A snapshot: the listener may take a grant it hears and leave at once.
    for (const { at, event } of [...shared.recent]) if (at >= since) onEvent(event);
  }
  return shared.keptFrom;
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
