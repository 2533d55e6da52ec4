import type { AcquirePlan } from "../options";
import type { SubscribedWaiter } from "./subscribed";

/** What an announcement asks of a wait: retry "now", "soon" (in the retry window: all heard it), "cancel"
 * (taken: back to plan), "grant" (a fair release handed it the lock), or nothing. */
export type Meaning = "now" | "soon" | "cancel" | "grant" | "ignore";

/**
 * What a listener hears: a channel's event, or "ended" when the subscription broke and no more will come. A
 * fair permit handed to one waiter is `granted:<its id in line>:<place>:<ms>:<permit>`; a semaphore's
 * acquisition that left n permits free is `acquired:<n>`.
 */
export type FeedEvent = "released" | "acquired" | `acquired:${string}` | `granted:${string}` | "ended";

/** A listener attached to an active subscription. */
export interface Listening {
  stop(): void; // never throws
  readonly since: number; // monotonic ms from which every event of the channel is heard, until "ended"
}

/** One lock's announcements on one client with wake-ups (or on every member of a quorum). */
export interface LockEvents {
  /** One unfair acquisition's wait. */
  waiter(plan: AcquirePlan): SubscribedWaiter;
  /** Resolves once the shared subscription is active; undefined if it failed or `signal` aborted first. */
  listen(onEvent: (event: FeedEvent) => void, signal: AbortSignal): Promise<Listening | undefined>;
  active(): boolean; // a subscription is active now: listening costs no request
  cost(): number; // commands listening now bills (0: one is active or on its way), per member of a quorum
}

/** A client's announcements, by channel: what {@link LockEvents} are made of. */
export interface ChannelFeed {
  lockEvents(key: string): LockEvents; // kept for the most recently used keys
  /** Each call passes its own `onEvent`: a listener is known by it, and a stop removes it wherever it listens. */
  listen(
    channel: string,
    onEvent: (event: FeedEvent) => void,
    signal: AbortSignal,
  ): Promise<Listening | undefined>;
  active(channel: string): boolean;
  cost(channel: string | undefined): number; // as LockEvents' (undefined: a channel not yet named)
}

/** Receives one channel's messages, and hears once if the subscription breaks. */
export interface ChannelListener {
  message(message: string): void;
  ended(): void;
}

/** Resolves with an unsubscribe once confirmed, or rejects; when unwanted (`signal`), a setup lets go. */
export type SubscribeChannel = ((
  channel: string,
  listener: ChannelListener,
  signal: AbortSignal,
) => Promise<() => void>) & {
  /** Commands subscribing the channel (undefined: any not yet subscribed) sends now; absent: one. */
  readonly cost?: (channel: string | undefined) => number;
};
