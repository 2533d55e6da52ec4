// The contract between a waiting acquisition and the announcements of its lock.

import type { Meaning, Waiting } from "../waiting";

/**
 * What a lock's channel carries: a release, an acquisition, or (fair locks and semaphores) a permit
 * handed to one waiter, `granted:<its id in line>:<place>:<ms>:<permit>`.
 */
export type LockEvent = "released" | "acquired" | `granted:${string}`;

/** What a listener hears: a lock event, or "ended" when the subscription broke and no more will come. */
export type FeedEvent = LockEvent | "ended";

/** A listener attached to an active subscription. */
export interface Listening {
  /** Stops listening; never throws. */
  stop(): void;
  /** Monotonic time (ms) from which the listener hears every event of the channel, until "ended". */
  readonly since: number;
}

/** One lock's announcements on one client with wake-ups (or on every member of a quorum). */
export interface LockEvents {
  /**
   * How one acquisition waits here: `meaning` tells what each announcement means to it, `fair`
   * whether it has a seat in line, `maxDelay` how often a covered wait still polls (ms).
   */
  waiting(meaning: (event: FeedEvent) => Meaning, fair: boolean, maxDelay: number): Waiting;
  /**
   * Resolves once the subscription is active (shared with the process's other waiters on the
   * lock), or with undefined when it could not be set up or `signal` aborted first.
   */
  listen(onEvent: (event: FeedEvent) => void, signal: AbortSignal): Promise<Listening | undefined>;
  /** Whether a subscription is active right now, so that listening costs no request. */
  active(): boolean;
}

/** A client's announcements, by channel: what {@link LockEvents} are made of. */
export interface ChannelFeed {
  /** The events of the lock at `key`, made once per key. */
  lockEvents(key: string): LockEvents;
  listen(
    channel: string,
    onEvent: (event: FeedEvent) => void,
    signal: AbortSignal,
  ): Promise<Listening | undefined>;
  active(channel: string): boolean;
}

/** Receives one channel's messages, and hears once if the subscription breaks. */
export interface ChannelListener {
  message(message: string): void;
  ended(): void;
}

/**
 * Subscribes to one channel; resolves with the way to unsubscribe once the server confirmed it,
 * rejects if it could not be set up. `signal` aborts when nobody waits for it any more: a setup that
 * hangs must then let go of what it holds.
 */
export type SubscribeChannel = (
  channel: string,
  listener: ChannelListener,
  signal: AbortSignal,
) => Promise<() => void>;

/** Reads a channel message as a lock event; anything unknown counts as a release (the safe guess: retry). */
export function lockEventOf(message: string): LockEvent {
  if (message === "acquired" || message.startsWith("granted:")) return message as LockEvent;
  return "released";
}
