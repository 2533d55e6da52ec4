// #region readme
import { Lock } from "@upstash/lock";
import { Redis } from "@upstash/redis";

// In the request handler: take the lock under a uuid of your choosing, then hand the uuid on.
export async function startJob(): Promise<string | undefined> {
  const uuid = crypto.randomUUID();
  const lock = new Lock({ id: "job-lock", redis: Redis.fromEnv(), lease: 60_000 });
  if (!(await lock.acquire({ uuid }))) return undefined;
  await enqueue({ uuid }); // e.g. a queue message to a background worker
  return uuid;
}

// In the background worker, another process: seed the uuid, finish, release.
export async function finishJob(uuid: string): Promise<boolean> {
  const lock = new Lock({ id: "job-lock", redis: Redis.fromEnv(), uuid });
  if ((await lock.getStatus()) !== "ACQUIRED") return false; // the lease ran out
  await lock.extend(30_000); // more time for the slow part
  // ... the work ...
  return lock.release(); // still checks the uuid in Redis: a stale worker cannot free a newer lock
}
// #endregion

/** Stands in for the reader's queue; the README test swaps in its own. */
export const queue = { enqueue: async (_message: { uuid: string }): Promise<void> => {} };
function enqueue(message: { uuid: string }): Promise<void> {
  return queue.enqueue(message);
}
