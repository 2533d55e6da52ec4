import type { RedisClient } from "../client/redis-client";
import { scriptRunnerFor } from "../client/script-runner";
import { LOCK_DEFAULTS, type LockSettings } from "../options";
import { releaseFeedFor } from "../wake/release-feed";
import type { LockStore } from "./lock-store";
import { QuorumStore } from "./quorum-store";
import { SingleStore } from "./single-store";

/** The store for a validated `redis` option: one client, or a quorum of independent ones. */
export function storeFor(settings: LockSettings, redis: RedisClient | readonly RedisClient[]): LockStore {
  const clients = Array.isArray(redis) ? redis : [redis];
  const stores = clients.map(
    (client) => new SingleStore(settings.id, settings.key, scriptRunnerFor(client), releaseFeedFor(client)),
  );
  if (stores.length === 1) return stores[0] as SingleStore;
  // A reply later than a lease is useless to a quorum, whatever the operation.
  return new QuorumStore(settings.id, stores, settings.hold.lease ?? LOCK_DEFAULTS.lease);
}
