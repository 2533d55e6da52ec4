import { sha1Hex } from "../sha1";
import type { EventFeed, FeedEvent, Listening, LockEvent } from "./feed-types";

/**
 * The pub/sub channel a lock's acquisitions and releases are announced on:
 * `lock-events:<SHA-1 of the key, hex>`, which the scripts compute with `redis.sha1hex`. Hashing
 * keeps the name safe in a URL path (Upstash's REST subscribe endpoint puts it there) and short,
 * whatever the id.
 */
export function lockEventChannel(key: string): string {
  return `lock-events:${sha1Hex(key)}`;
}

/**
 * How a store listens to the events of the lock at `key` (see `LockStore.listenForEvents`): on the
 * client's feed, if it has one, on the lock's channel, named on first use.
 */
export function lockEventListener(feed: EventFeed | undefined, key: string): EventListenerForLock {
  let channel: string | undefined;
  return async (onEvent, signal, replaySince) => {
    if (!feed || signal.aborted) return undefined;
    channel ??= lockEventChannel(key);
    return feed.listen(channel, onEvent, signal, replaySince);
  };
}

/** `EventFeed.listen` with the channel already chosen. */
export type EventListenerForLock = (
  onEvent: (event: FeedEvent) => void,
  signal: AbortSignal,
  replaySince?: number,
) => Promise<Listening | undefined>;

const GRANT = /^granted:[0-9a-f]{40}:\d+:\d+$/;

/** Reads a channel message as a lock event; anything else counts as a release (the safe guess: retry). */
export function lockEventOf(message: unknown): LockEvent {
  if (message === "acquired") return "acquired";
  if (typeof message === "string" && GRANT.test(message)) return message as LockEvent;
  return "released";
}

/** A fair release's hand-over to one waiter, read from a "granted:<sha1>:<place>:<ms>" event. */
export interface Grant {
  /** The SHA-1 of the waiter's token, in lowercase hex. */
  readonly holder: string;
  /** The waiter's place in line, which names one stay in line. */
  readonly place: number;
  /** How long the waiter holds without a request of its own, in milliseconds from the release. */
  readonly ms: number;
}

/** The grant a "granted:…" event carries; undefined for other events. */
export function grantOf(event: LockEvent): Grant | undefined {
  if (!event.startsWith("granted:")) return undefined;
  const [, holder = "", place = "", ms = ""] = event.split(":");
  return { holder, place: Number(place), ms: Number(ms) };
}
