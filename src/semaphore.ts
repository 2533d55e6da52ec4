import { acquire, type Outcome } from "./acquire";
import { type Owner, openOwner } from "./connect";
import { LockAcquisitionError } from "./errors";
import { newToken } from "./ids";
import { Lease, leaseContext, runHolding } from "./lease";
import { type AcquirePlan, resolveAcquirePlan } from "./options";
import { MAX_PERMITS, permitStore } from "./permits/store";
import type { LockAcquireConfig, SemaphoreCreateConfig } from "./types";
import { check } from "./validate";

/**
 * Up to `limit` holders at once, across processes: each acquisition takes one of `limit` permits,
 * each a key holding its holder's token with a lease, so a holder that dies frees its permit when
 * the lease runs out, without anyone cleaning up. One instance serves any number of concurrent
 * callers: every acquisition gets a {@link Lease} of its own (its token, signal, renewals and
 * release), so keep one module-level Semaphore and acquire from every request.
 *
 * @example
 * // At most 5 calls to the paid API at once, from any number of functions.
 * const paidApi = new Semaphore({ id: "paid-api", redis: Redis.fromEnv(), limit: 5 });
 * const answer = await paidApi.runExclusive(() => callPaidApi(), { timeout: 10_000 });
 */
export class Semaphore {
  /** How many holders the semaphore admits at once. */
  readonly limit: number;
  readonly #owner: Owner;

  /**
   * Checks the options and creates the semaphore; sends nothing to Redis.
   * @throws {TypeError | RangeError} when an option is missing or out of range, naming it.
   */
  constructor(config: SemaphoreCreateConfig) {
    check("options", config, "object", true);
    const { limit } = config;
    check("limit", limit, "permits", true);
    if ((limit as number) > MAX_PERMITS) {
      throw new RangeError(
        `Expected \`limit\` to be at most ${MAX_PERMITS} (permits; every request sends every permit's key), got ${limit}`,
      );
    }
    check("fair", config.fair, "boolean");
    const fair = config.fair ?? false;
    this.limit = limit as number;
    this.#owner = openOwner(config, fair, permitStore(this.limit, fair));
  }

  /** The semaphore's id; its permits' keys are derived from `prefix` + `id`. */
  get id(): string {
    return this.#owner.settings.id;
  }

  /** Settles when the work left running in the background has settled (see `Lock.pending`); never rejects. */
  get pending(): Promise<void> {
    return this.#owner.running.pending;
  }

  /**
   * Tries to take a permit, retrying while all are held.
   * @returns the lease on the permit; undefined when every permit stayed held through every
   *   attempt or until `timeout`.
   * @throws {TypeError | RangeError} on invalid options, before any request.
   * @throws {LockRedisError} when Redis did not answer, could not be reached, or refused.
   * @throws the `signal`'s reason when the signal aborts.
   */
  async acquire(config?: LockAcquireConfig): Promise<Lease | undefined> {
    const { plan, token, outcome } = await this.#acquire(config);
    if (outcome.acquired) return this.#lease(plan, token, outcome);
    if (outcome.reason === "redis-error") throw outcome.error;
    return undefined;
  }

  /**
   * Like {@link Semaphore.acquire}, but throws when no permit was taken; suits `await using`.
   * @throws {LockAcquisitionError} when no permit was taken; its `reason` says why.
   */
  async acquireOrThrow(config?: LockAcquireConfig): Promise<Lease> {
    const { plan, token, outcome } = await this.#acquire(config);
    if (!outcome.acquired) throw new LockAcquisitionError(this.id, outcome);
    return this.#lease(plan, token, outcome);
  }

  /**
   * Takes a permit (or throws like {@link Semaphore.acquireOrThrow}), runs `work` with its signal
   * and lease, and gives it back at the end; `work`'s result or error is what this returns or throws.
   */
  async runExclusive<T>(
    work: (signal: AbortSignal, lease: Lease) => Promise<T> | T,
    config?: LockAcquireConfig,
  ): Promise<T> {
    return runHolding(await this.acquireOrThrow(config), work);
  }

  /**
   * A lease on a permit taken elsewhere under `uuid` (`acquire({ uuid })` in another process), to
   * `release()`, `extend()` or `getStatus()` it here. Sends nothing until one of them is called.
   */
  permit(uuid: string): Lease {
    check("uuid", uuid, "string", true);
    return new Lease(leaseContext(this.#owner, this.#owner.settings.plain, uuid, undefined), undefined);
  }

  async #acquire(
    config: LockAcquireConfig | undefined,
  ): Promise<{ plan: AcquirePlan; token: string; outcome: Outcome }> {
    const plan = resolveAcquirePlan(config, this.#owner.settings);
    if (plan.signal?.aborted) throw plan.signal.reason;
    const token = plan.uuid ?? newToken();
    const { lockId, store, background } = this.#owner;
    const outcome = await acquire({ lockId, store, background, plan, token });
    return { plan, token, outcome };
  }

  #lease(plan: AcquirePlan, token: string, outcome: Outcome & { acquired: true }): Lease {
    return new Lease(leaseContext(this.#owner, plan, token, outcome.permit), outcome);
  }
}
