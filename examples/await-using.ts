// #region readme
import { Lock, LockAcquisitionError } from "@upstash/lock";
import { Redis } from "@upstash/redis";

export async function handleOperation(): Promise<"done" | "busy"> {
  try {
    await using lock = await new Lock({
      id: "unique-lock-id",
      redis: Redis.fromEnv(),
    }).acquireOrThrow();

    await criticalSection(lock.id);
    return "done";
  } catch (error) {
    if (error instanceof LockAcquisitionError && error.reason !== "redis-error") return "busy";
    throw error; // an outage (reason "redis-error"), or the critical section's own error
  } // the lock is released here, whether criticalSection returned or threw
}
// #endregion

// #region readme-boolean
export async function handleOperationWithBoolean(): Promise<boolean> {
  await using lock = new Lock({ id: "unique-lock-id", redis: Redis.fromEnv() });
  if (!(await lock.acquire())) return false;
  await criticalSection(lock.id);
  return true;
} // released here if it was acquired; nothing is sent otherwise
// #endregion

/** Stands in for the reader's own work; the README test swaps in its own. */
export const work = { criticalSection: async (_lockId: string): Promise<void> => {} };
function criticalSection(lockId: string): Promise<void> {
  return work.criticalSection(lockId);
}
