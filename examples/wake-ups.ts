// #region readme
import { enableWakeUps, Lock } from "@upstash/lock";
import { Redis } from "@upstash/redis";

const redis = Redis.fromEnv();
enableWakeUps(redis); // once per client: long waits on its locks are woken by releases

export async function runNightlyExport(): Promise<"done" | "busy"> {
  const lock = new Lock({ id: "nightly-export", redis, lease: 30_000 });
  // Waits up to a minute. Subscribed, it polls only every 10 s (retry.maxDelay, 10 × delay) and
  // retries within a round trip of the holder's release.
  if (!(await lock.acquire({ timeout: 60_000, retry: { delay: 1_000 } }))) return "busy";
  try {
    await exportEverything(lock.signal);
    return "done";
  } finally {
    await lock.release();
  }
}
// #endregion

/** Stands in for the reader's own work; the docs test swaps in its own. */
export const work = { exportEverything: async (_signal: AbortSignal): Promise<void> => {} };
function exportEverything(signal: AbortSignal): Promise<void> {
  return work.exportEverything(signal);
}
