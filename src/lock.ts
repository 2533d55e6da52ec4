import type { ScriptArgument } from "./client/redis-client";
import { replyInteger, replyIntegers } from "./client/reply";
import { type ScriptRunner, scriptRunnerFor } from "./client/script-runner";
import { ensureAsyncDisposeSymbol } from "./dispose-symbol";
import { LockAcquisitionError, type LockOperation, LockRedisError } from "./errors";
import { RECEIPT_LIFETIME_MS, receiptKey } from "./keys";
import { type AcquirePlan, type ResolvedRetry, resolveAcquirePlan, resolveLockOptions } from "./options";
import { takeIfFreeOrOwned } from "./scripts/acquire";
import { addLeaseIfOwned } from "./scripts/extend";
import type { LuaScript } from "./scripts/lua-script";
import { deleteIfOwned } from "./scripts/release";
import { checkOwner } from "./scripts/status";
import { sleep } from "./sleep";
import { newToken } from "./token";
import type { LockAcquireConfig, LockCreateConfig, LockStatus } from "./types";
import { assertPositiveInteger } from "./validate";

ensureAsyncDisposeSymbol();

/** How one acquisition ended. */
interface AcquireOutcome {
  acquired: boolean;
  attempts: number;
  elapsedMs: number;
  /** Set when the last attempt could not reach Redis. */
  error?: LockRedisError;
}

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
export class Lock implements AsyncDisposable {
  readonly #id: string;
  readonly #scripts: ScriptRunner;
  readonly #lease: number;
  readonly #retry: ResolvedRetry;
  /** The token this instance holds or was seeded with; kept when a later acquire fails. */
  #token: string | undefined;

  /**
   * Checks the options and creates the lock; sends nothing to Redis.
   * @throws {TypeError | RangeError} when an option is missing or out of range.
   */
  constructor(config: LockCreateConfig) {
    const options = resolveLockOptions(config);
    this.#id = options.id;
    this.#scripts = scriptRunnerFor(config.redis);
    this.#lease = options.lease;
    this.#retry = options.retry;
    this.#token = options.uuid;
  }

  /** The lock's id, which is also its Redis key. */
  get id(): string {
    return this.#id;
  }

  /**
   * Tries to take the lock, retrying while another owner holds it.
   * @returns true when this instance now holds the lock; false when another owner kept it
   *   through every attempt. A failed call keeps any lock this instance already held.
   * @throws {TypeError | RangeError} on invalid options, before any request.
   * @throws {LockRedisError} when the last attempt could not reach Redis.
   */
  async acquire(config?: LockAcquireConfig): Promise<boolean> {
    const outcome = await this.#acquire(config);
    if (outcome.error) throw outcome.error;
    return outcome.acquired;
  }

  /**
   * Like {@link Lock.acquire}, but resolves with the lock itself, which suits `await using`.
   * @throws {LockAcquisitionError} when the lock was not acquired; when Redis could not be
   *   reached on the last attempt, its `reason` is "redis-error" and `cause` the LockRedisError.
   */
  async acquireOrThrow(config?: LockAcquireConfig): Promise<this> {
    const outcome = await this.#acquire(config);
    if (outcome.acquired) return this;
    const reason = outcome.error ? "redis-error" : "held";
    throw new LockAcquisitionError(
      this.#id,
      { attempts: outcome.attempts, elapsedMs: outcome.elapsedMs, reason },
      outcome.error ? { cause: outcome.error } : undefined,
    );
  }

  /**
   * Deletes the key if, and only if, it still holds this instance's token.
   * @returns true when this call deleted the lock; false when it was not held by this token
   *   (never acquired, already released, expired, or taken by another owner).
   * @throws {LockRedisError} when Redis could not be reached.
   */
  async release(): Promise<boolean> {
    const token = this.#token;
    if (token === undefined) return false;
    const released = await this.#deleteIfOwned(token);
    if (released && this.#token === token) this.#token = undefined;
    return released;
  }

  /**
   * Adds `amt` milliseconds to the lease that remains, while this instance's token holds the key.
   * @param amt milliseconds to add, a positive integer.
   * @returns true when the lease was extended; false when the lock is not held by this token.
   * @throws {TypeError | RangeError} when `amt` is not a positive integer, before any request.
   * @throws {LockRedisError} when Redis could not be reached.
   */
  async extend(amt: number): Promise<boolean> {
    assertPositiveInteger("amt", amt, "milliseconds");
    const token = this.#token;
    if (token === undefined) return false;
    const keys = [this.#id, receiptKey(this.#id, token)];
    const reply = await this.#run("extend", addLeaseIfOwned, keys, [
      token,
      newToken(),
      amt,
      RECEIPT_LIFETIME_MS,
    ]);
    return replyIntegers(reply)[0] === 1;
  }

  /**
   * Asks Redis whether this instance's token holds the key right now.
   * @returns "ACQUIRED" when it does, otherwise "FREE" (without a request when there is no token).
   * @throws {LockRedisError} when Redis could not be reached.
   */
  async getStatus(): Promise<LockStatus> {
    const token = this.#token;
    if (token === undefined) return "FREE";
    const reply = await this.#run("status", checkOwner, [this.#id], [token]);
    return replyIntegers(reply)[0] === 1 ? "ACQUIRED" : "FREE";
  }

  /**
   * Releases the lock when this instance holds it, for `await using`. Does nothing when the lock
   * was never acquired or was already released, and never throws: if Redis cannot be reached the
   * key expires at the end of its lease. Call `release()` yourself to learn the outcome.
   */
  async [Symbol.asyncDispose](): Promise<void> {
    if (this.#token === undefined) return;
    try {
      await this.release();
    } catch {
      // Documented: disposal must not replace the error of the block it closes.
    }
  }

  async #acquire(config: LockAcquireConfig | undefined): Promise<AcquireOutcome> {
    const plan = resolveAcquirePlan(config, { lease: this.#lease, retry: this.#retry });
    const token = plan.uuid ?? newToken();
    const started = performance.now();
    const outcome = await this.#tryRepeatedly(plan, token);
    const elapsedMs = performance.now() - started;
    if (outcome.acquired) {
      this.#token = token;
    } else if (outcome.error && token !== this.#token) {
      // The last request may have run with its reply lost: do not leave the key held by a
      // token nobody remembers.
      await this.#releaseQuietly(token);
    }
    return { ...outcome, elapsedMs };
  }

  async #tryRepeatedly(plan: AcquirePlan, token: string): Promise<Omit<AcquireOutcome, "elapsedMs">> {
    const tries = Math.max(1, plan.retry.attempts);
    for (let attempt = 1; ; attempt++) {
      let error: LockRedisError | undefined;
      try {
        const reply = await this.#run("acquire", takeIfFreeOrOwned, [this.#id], [token, plan.lease]);
        if (replyIntegers(reply)[0] === 1) return { acquired: true, attempts: attempt };
      } catch (caught) {
        if (!(caught instanceof LockRedisError)) throw caught;
        error = caught;
      }
      if (attempt >= tries)
        return error ? { acquired: false, attempts: attempt, error } : { acquired: false, attempts: attempt };
      await sleep(plan.retry.delay);
    }
  }

  /** Deletes the key if it holds `token`; each call gets its own id so its receipt is its own. */
  async #deleteIfOwned(token: string): Promise<boolean> {
    const keys = [this.#id, receiptKey(this.#id, token)];
    const reply = await this.#run("release", deleteIfOwned, keys, [token, newToken(), RECEIPT_LIFETIME_MS]);
    return replyInteger(reply) === 1;
  }

  async #releaseQuietly(token: string): Promise<void> {
    try {
      await this.#deleteIfOwned(token);
    } catch {
      // Best effort: the lease bounds how long such a key can stay.
    }
  }

  /** Runs a script whose first argument is the token; failures become LockRedisError without it. */
  async #run(
    operation: LockOperation,
    script: LuaScript,
    keys: string[],
    args: [string, ...ScriptArgument[]],
  ) {
    try {
      return await this.#scripts.run(script, keys, args);
    } catch (error) {
      throw new LockRedisError(this.#id, operation, error, args[0]);
    }
  }
}
