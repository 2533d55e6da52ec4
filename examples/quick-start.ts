// #region readme
import { Lock } from "@upstash/lock";
import { Redis } from "@upstash/redis";

export async function handleOperation(): Promise<boolean> {
  const lock = new Lock({
    id: "unique-lock-id",
    redis: Redis.fromEnv(),
  });

  if (await lock.acquire()) {
    try {
      await criticalSection(); // only one holder at a time gets here
    } finally {
      await lock.release();
    }
    return true;
  }
  return false; // another holder kept the lock through every attempt
}
// #endregion

/** Stands in for the reader's own work; the README test swaps in its own. */
export const work = { criticalSection: async (): Promise<void> => {} };
function criticalSection(): Promise<void> {
  return work.criticalSection();
}
