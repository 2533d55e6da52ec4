import { type Background, newBackground } from "./background";
import type { LeaseOwner } from "./lease";
import { isQuorum, type LockSettings, resolveLockSettings } from "./options";
import { keyPrefixOf, type RedisClient, scriptRunnerFor } from "./redis/client";
import { guessServerKind } from "./redis/server";
import type { StoreMaker, StoreTarget } from "./store";
import { TokenLeases } from "./token-leases";
import type { LockCreateConfig } from "./types";
import { feedFor } from "./wake/feeds";

/** Where a lock's key lives on one client: its runner (key-locked on Upstash), server kind, announcements. */
export function connectTarget(settings: LockSettings, client: RedisClient): StoreTarget {
  const server = settings.server ?? guessServerKind(client);
  const channelKey = keyPrefixOf(client) + settings.key;
  return {
    lockId: settings.id,
    key: settings.key,
    channelKey,
    client,
    run: scriptRunnerFor(client, server === "upstash"),
    server,
    events: () => feedFor(client)?.lockEvents(channelKey), // per wait: wake-ups may be enabled later
  };
}

/** A Lock's or Semaphore's parts: what its leases share, its checked settings, the work it leaves running. */
export interface Owner extends LeaseOwner {
  readonly tokens: TokenLeases;
  readonly settings: LockSettings;
  readonly running: Background;
}

/**
 * Checks the options and connects a Lock or Semaphore; sends nothing.
 * @throws {TypeError | RangeError} when an option is missing or out of range, naming it.
 */
export function openOwner(config: LockCreateConfig, fair: boolean, make: StoreMaker): Owner {
  const settings = resolveLockSettings(config, fair);
  const running = newBackground(settings.waitUntil);
  const { redis } = settings;
  // The Redis side: `make` on the one client, or on each member of a quorum.
  const store = isQuorum(redis) ? redis.build(settings, make, running) : make(connectTarget(settings, redis));
  const tokens = new TokenLeases();
  return { lockId: settings.id, store, background: running.add, tokens, settings, running };
}
