import { acquire, type Outcome } from "./acquire";
import { type Owner, openOwner } from "./connect";
import { LockAcquisitionError } from "./errors";
import { newToken } from "./ids";
import { Lease, leaseContext, runHolding } from "./lease";
import { resolveAcquirePlan } from "./options";
import { MAX_PERMITS, permitStore } from "./permits/store";
import type { LockAcquireConfig, SemaphoreCreateConfig } from "./types";
import { check } from "./validate";

/**
 * Up to `limit` holders at once across processes; a dead holder's permit frees itself when its lease runs
 * out. One instance serves any number of concurrent callers, each with its own {@link Lease}: keep one
 * module-level Semaphore and acquire from every request.
 * @example
 * const paidApi = new Semaphore({ id: "paid-api", redis: Redis.fromEnv(), limit: 5 }); // 5 calls at once
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
    const { limit, fair } = config; // each read once, then checked
    check("limit", limit, "permits", true);
    if ((limit as number) > MAX_PERMITS) {
      throw new RangeError(
        `Expected \`limit\` to be at most ${MAX_PERMITS} (permits; every request sends every permit's key), got ${limit}`,
      );
    }
    check("fair", fair, "boolean");
    if ((config as { uuid?: unknown }).uuid != null) {
      throw new TypeError(
        "Expected no `uuid` on a Semaphore (its holders are many): pass acquire({ uuid }), or use permit(uuid)",
      );
    }
    this.limit = limit as number;
    this.#owner = openOwner(config, fair ?? false, permitStore(this.limit, fair ?? false));
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
   * @returns the permit's lease; undefined when all stayed held through every attempt or until `timeout`.
   * @throws {TypeError | RangeError} on invalid options, before any request.
   * @throws {LockRedisError} when Redis did not answer, could not be reached, or refused.
   * @throws the `signal`'s reason when the signal aborts.
   */
  async acquire(config?: LockAcquireConfig): Promise<Lease | undefined> {
    const { outcome, lease } = await this.#acquire(config);
    if (!outcome.acquired && outcome.reason === "redis-error") throw outcome.error;
    return lease;
  }

  /** Like `acquire()`, for `await using`. @throws {LockAcquisitionError} if none was taken (see `reason`). */
  async acquireOrThrow(config?: LockAcquireConfig): Promise<Lease> {
    const { outcome, lease } = await this.#acquire(config);
    if (!outcome.acquired) throw new LockAcquisitionError(this.id, outcome);
    return lease as Lease;
  }

  /** Like {@link Lock.runExclusive}, with a permit taken as by {@link Semaphore.acquireOrThrow}. */
  async runExclusive<T>(
    work: (signal: AbortSignal, lease: Lease) => Promise<T> | T,
    config?: LockAcquireConfig,
  ): Promise<T> {
    return runHolding(work, () => this.acquireOrThrow(config));
  }

  /**
   * The lease on a permit taken with `acquire({ uuid })`, to use here; sends nothing yet. Taken here and
   * still held: that acquisition's lease (one uuid, one hold). Throws a RangeError for `""`, which names
   * no permit.
   */
  permit(uuid: string): Lease {
    check("uuid", uuid, "id", true); // "" names no permit: `uuid: ""` means "draw one" elsewhere
    const { tokens, settings } = this.#owner;
    const held = tokens.newest(uuid);
    if (held?.active) return held;
    const plan = { ...settings.plain, uuid };
    const handle = new Lease(leaseContext(this.#owner, plan, uuid, undefined), undefined);
    tokens.add(uuid, handle, true);
    return handle;
  }

  async #acquire(config?: LockAcquireConfig): Promise<{ outcome: Outcome; lease: Lease | undefined }> {
    const plan = resolveAcquirePlan(config, this.#owner.settings);
    if (plan.signal?.aborted) throw plan.signal.reason;
    const token = plan.uuid ?? newToken();
    const chosen = plan.uuid === undefined ? undefined : this.#owner.tokens.begin(token);
    let outcome: Outcome | undefined;
    let lease: Lease | undefined;
    try {
      const { lockId, store, background } = this.#owner;
      outcome = await acquire({ lockId, store, background, plan, token, gate: chosen?.gate });
      if (outcome.acquired)
        lease = new Lease(leaseContext(this.#owner, plan, token, outcome.permit), outcome);
      return { outcome, lease };
    } finally {
      chosen?.finish(outcome, lease);
    }
  }
}
