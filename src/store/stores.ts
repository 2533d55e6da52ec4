import { scriptRunnerFor } from "../client/script-runner";
import { guessServerKind } from "../client/server";
import type { RedisClient } from "../client/types";
import { LOCK_DEFAULTS, type LockSettings, QUEUE_GRACE_MS } from "../options";
import { eventFeedFor } from "../wake/event-feed";
import type { LockStore } from "./lock-store";
import { PermitStore, permitKeys } from "./permit-store";
import { QuorumStore } from "./quorum-store";
import { SingleStore } from "./single-store";

type Background = (work: Promise<unknown>) => void;

/** What one client is: its script runner, key-locked on Upstash, its server kind and its event feed. */
function clientParts(settings: LockSettings, client: RedisClient) {
  const server = settings.server ?? guessServerKind(client);
  return {
    lockId: settings.id,
    key: settings.key,
    scripts: scriptRunnerFor(client, server === "upstash"),
    server,
    feed: eventFeedFor(client),
    grantMs: grantMs(settings),
  };
}

/**
 * How long a fair release hands the lock to the next waiter for: as long as a waiter's place in
 * line outlives its last try (its longest wait between tries, plus the queue's grace), which is
 * how long a dead waiter may hold the line up anyway.
 */
function grantMs(settings: LockSettings): number {
  const { delay = LOCK_DEFAULTS.delay, maxDelay } = settings.hold.retry ?? {};
  return Math.ceil(Math.max(delay, maxDelay ?? delay * LOCK_DEFAULTS.maxDelayFactor)) + QUEUE_GRACE_MS;
}

function clientsOf(redis: RedisClient | readonly RedisClient[]): readonly RedisClient[] {
  return Array.isArray(redis) ? redis : [redis as RedisClient];
}

/**
 * The Redis side of a lock: its key on one client, or on a quorum of independent ones. A fair lock
 * keeps its key (so it still excludes every other lock on it) and adds a queue next to it.
 */
export function lockStore(
  settings: LockSettings,
  redis: RedisClient | readonly RedisClient[],
  background: Background,
): LockStore {
  const stores = clientsOf(redis).map((client) => {
    const parts = clientParts(settings, client);
    return settings.fair
      ? new PermitStore({ ...parts, permits: [settings.key], fair: true })
      : new SingleStore(parts);
  });
  if (stores.length === 1) return stores[0] as LockStore;
  return new QuorumStore(settings.id, stores, background);
}

/** The Redis side of a semaphore: `limit` permit keys on one client, or on each of a quorum. */
export function semaphoreStore(
  settings: LockSettings,
  redis: RedisClient | readonly RedisClient[],
  limit: number,
  background: Background,
): LockStore {
  const permits = permitKeys(settings.key, limit);
  const stores = clientsOf(redis).map(
    (client) => new PermitStore({ ...clientParts(settings, client), permits, fair: settings.fair }),
  );
  if (stores.length === 1) return stores[0] as LockStore;
  return new QuorumStore(settings.id, stores, background, limit);
}
