// The contract between a waiting acquisition and the announcements of its lock. Types only, so the
// feeds and the code that picks one import them without import cycles.

/**
 * What a lock's event channel carries: a release, an acquisition, or (fair locks and semaphores)
 * a permit handed to the waiter whose token's SHA-1 is `<sha1>`, in line at `<place>`, for `<ms>`
 * milliseconds.
 */
export type LockEvent = "released" | "acquired" | `granted:${string}:${number}:${number}`;

/**
 * What a listener hears: a lock event, or "ended" when the subscription broke (a stream or
 * connection lost) and no more events will come; the listener then goes back to polling.
 */
export type FeedEvent = LockEvent | "ended";

/** Stops listening; never rejects. */
export type StopListening = () => void;

/**
 * A listener attached to an active subscription: how to stop it, and the monotonic time (ms) from
 * which it has heard every event of the channel, live or replayed.
 */
export interface Listening {
  readonly stop: StopListening;
  readonly coveredFrom: number;
}

/**
 * Lock event announcements on one client. `listen` resolves once the subscription is active (so no
 * event after that moment is missed), or with undefined when it could not be set up or `signal`
 * aborted first; the waiter then simply keeps polling. With `replaySince` (a monotonic time, ms), a
 * subscription that was already active also replays the events it received since then, so a waiter
 * that subscribes after a try still hears what happened after that try was sent.
 */
export interface EventFeed {
  listen(
    channel: string,
    onEvent: (event: FeedEvent) => void,
    signal: AbortSignal,
    replaySince?: number,
  ): Promise<Listening | undefined>;
}

/** Receives one channel's messages, and hears once if the subscription breaks. */
export interface ChannelListener {
  message(message: unknown): void;
  ended(): void;
}

/**
 * Subscribes to one channel on a client; resolves with the way to unsubscribe once the server
 * confirmed the subscription, rejects if it could not be set up. `signal` aborts when nobody waits
 * for the subscription any more: a setup that hangs (a connection that never opens) must then let go
 * of what it holds; it may still settle later.
 */
export type SubscribeChannel = (
  channel: string,
  listener: ChannelListener,
  signal: AbortSignal,
) => Promise<StopListening>;
