// A background job (a cron run, a queue consumer, a CLI) that drains a queue of changes, each under a lock for
// its account: two workers may drain the same queue, but never apply changes to one account at once.
import { Lock, LockAcquisitionError } from "@upstash/lock";
import { Redis } from "@upstash/redis";

export const QUEUE = "queue:account-changes";
/** Messages whose account was busy, for a later run. */
export const RETRY_QUEUE = "queue:account-changes:retry";

export interface AccountChange {
  accountId: string;
  change: string;
}

export async function drainAccountChanges(): Promise<{ applied: number; deferred: number }> {
  const redis = Redis.fromEnv();
  let applied = 0;
  let deferred = 0;
  const next = () => redis.lpop<AccountChange>(QUEUE);
  for (let message = await next(); message !== null; message = await next()) {
    try {
      // Renewed while the change runs, however long it takes; one try, since a busy account is deferred.
      await using lock = await new Lock({
        id: `account:${message.accountId}`,
        redis,
        lease: 5_000,
        autoExtend: true,
        retry: { attempts: 1 },
      }).acquireOrThrow();
      await applyChange(message, lock.signal); // the signal aborts if the lock is lost mid-change
      applied += 1;
    } catch (error) {
      if (!(error instanceof LockAcquisitionError) || error.reason === "redis-error") throw error; // an outage
      await redis.rpush(RETRY_QUEUE, message);
      deferred += 1;
    } // the lock is released here, at the end of each message, also when applyChange throws
  }
  return { applied, deferred };
}

/** Stands in for the reader's own work; the example's test swaps in its own. */
export const work = {
  applyChange: async (_message: AccountChange, _signal: AbortSignal): Promise<void> => {},
};
function applyChange(message: AccountChange, signal: AbortSignal): Promise<void> {
  return work.applyChange(message, signal);
}
