// Hand-off from a request to a background job, through a queue: the route handler takes the lock under a uuid
// it chooses and puts the uuid in the job's message; the worker, another process, seeds that uuid into its own
// Lock, finishes the work and releases. Between the two, nobody else can start the same export.
import { Lock } from "@upstash/lock";
import { Redis } from "@upstash/redis";

export const EXPORT_QUEUE = "queue:exports";

interface ExportJob {
  accountId: string;
  exportId: string;
  /** The lock's token: whoever holds it can release the lock, so it travels only inside the queue. */
  lockUuid: string;
}

const exportLockId = (accountId: string) => `export:${accountId}`;

/** `POST {"accountId": "..."}`, e.g. app/api/exports/route.ts: 202 with the export's id, or 409 if one runs. */
export async function POST(request: Request): Promise<Response> {
  const { accountId } = (await request.json()) as { accountId: string };
  const redis = Redis.fromEnv();
  const lockUuid = crypto.randomUUID();
  // The lease covers the wait in the queue; the worker extends it when it starts.
  const lock = new Lock({ id: exportLockId(accountId), redis, lease: 60_000, retry: { attempts: 1 } });
  if (!(await lock.acquire({ uuid: lockUuid }))) {
    return Response.json({ error: "An export of this account is already running" }, { status: 409 });
  }
  const job: ExportJob = { accountId, exportId: crypto.randomUUID(), lockUuid };
  try {
    await redis.rpush(EXPORT_QUEUE, job);
  } catch (error) {
    await lock.release(); // no job will come for it: free the account now rather than after the lease
    throw error;
  }
  return Response.json({ exportId: job.exportId }, { status: 202 });
}

/** The worker: takes the next job, if any, and finishes it under the lock the request took. */
export async function runNextExport(): Promise<"done" | "lock-expired" | "idle"> {
  const redis = Redis.fromEnv();
  const job = await redis.lpop<ExportJob>(EXPORT_QUEUE);
  if (job === null) return "idle";
  const lock = new Lock({ id: exportLockId(job.accountId), redis, uuid: job.lockUuid });
  // The lease ran out while the job waited, so another export may have started: do not run this one.
  if (!(await lock.extend(120_000))) return "lock-expired";
  try {
    await buildExport(job.accountId, job.exportId);
    return "done";
  } finally {
    await lock.release(); // checks the uuid in Redis: a stale worker cannot free a newer export's lock
  }
}

/** Stands in for the reader's own work; the example's test swaps in its own. */
export const work = { buildExport: async (_accountId: string, _exportId: string): Promise<void> => {} };
function buildExport(accountId: string, exportId: string): Promise<void> {
  return work.buildExport(accountId, exportId);
}
