// #region readme
import { FairLock } from "@upstash/lock";
import { Redis } from "@upstash/redis";

// Every worker drains the same queue; a fair lock hands the queue to them in turn, so no worker
// starves while another one takes the lock straight back after each batch.
export async function drainBatch(worker: string): Promise<number> {
  const lock = new FairLock({ id: "queue:drain", redis: Redis.fromEnv() });
  await using held = await lock.acquireOrThrow({ timeout: 30_000 }); // waits in line, in order
  return await processNextBatch(worker, held.signal); // await here: the lock is released on return
}
// #endregion

/** Stands in for the reader's work; the README test swaps in its own. */
export const work = {
  processNextBatch: async (_worker: string, _signal: AbortSignal): Promise<number> => 0,
};
function processNextBatch(worker: string, signal: AbortSignal): Promise<number> {
  return work.processNextBatch(worker, signal);
}
