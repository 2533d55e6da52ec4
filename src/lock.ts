import { LeaseHolder } from "./lease-holder";
import { resolveLockSettings } from "./options";
import { lockStore } from "./store/stores";
import type { LockCreateConfig } from "./types";

/**
 * A distributed lock on one Redis key. The key is the lock's `id`; its value is the holder's
 * token (a UUID unless you pass your own), so 0.2 and this version exclude each other.
 *
 * @example
 * const lock = new Lock({ id: "invoice:42", redis: Redis.fromEnv() });
 * if (await lock.acquire()) {
 *   try { await work(); } finally { await lock.release(); }
 * }
 */
export class Lock extends LeaseHolder {
  /**
   * Checks the options and creates the lock; sends nothing to Redis.
   * @throws {TypeError | RangeError} when an option is missing or out of range.
   */
  constructor(config: LockCreateConfig) {
    const settings = resolveLockSettings(config);
    super(settings, (background) => lockStore(settings, config.redis, background));
  }
}
