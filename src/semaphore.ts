import { LeaseHolder } from "./lease-holder";
import { resolveLockSettings, resolvePermitLimit } from "./options";
import { semaphoreStore } from "./store/stores";
import type { SemaphoreCreateConfig } from "./types";

/**
 * Up to `limit` holders at once across processes: each acquisition takes one of `limit` permits,
 * each a key with the holder's token and a lease, so a holder that dies frees its permit when the
 * lease runs out, without anyone cleaning up. Everything else is a `Lock`'s: `acquire`,
 * `acquireOrThrow`, `runExclusive`, `release`, `extend`, `getStatus`, `await using`, auto-extend,
 * the loss signal, fencing tokens and `fair`.
 *
 * @example
 * // At most 5 calls to the paid API at once, from any number of functions.
 * const permits = new Semaphore({ id: "paid-api", redis: Redis.fromEnv(), limit: 5 });
 * const answer = await permits.runExclusive(() => callPaidApi(), { timeout: 10_000 });
 */
export class Semaphore extends LeaseHolder {
  /** How many holders the semaphore admits at once. */
  readonly limit: number;

  /**
   * Checks the options and creates the semaphore; sends nothing to Redis.
   * @throws {TypeError | RangeError} when an option is missing or out of range.
   */
  constructor(config: SemaphoreCreateConfig) {
    const settings = resolveLockSettings(config);
    const limit = resolvePermitLimit(config?.limit);
    super(settings, (background) => semaphoreStore(settings, config.redis, limit, background));
    this.limit = limit;
  }
}
