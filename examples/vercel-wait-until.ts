// A Next.js App Router route on Vercel, e.g. app/api/reports/rebuild/route.ts, that waits for the lock.
// Vercel freezes a function once its response is sent; work still running then is lost unless it was
// handed to `waitUntil`. The lock leaves work running in one case: a wait that ends (the request was
// cancelled, or the timeout ran out) while a try is still in flight. If that try took the lock after
// all, the lock releases it in the background; `waitUntil` keeps the function alive for that release.
import { Lock, LockAcquisitionError } from "@upstash/lock";
import { Redis } from "@upstash/redis";
import { waitUntil } from "@vercel/functions";

const redis = Redis.fromEnv();

/** How long a request waits for a rebuild already running, in milliseconds. */
const WAIT_MS = 2_000;

/**
 * `POST ?report=<id>`: rebuilds the report, one rebuild at a time. A request that finds a rebuild
 * running waits up to two seconds, or until the caller goes away, then answers 409.
 */
export async function POST(request: Request): Promise<Response> {
  const reportId = new URL(request.url).searchParams.get("report");
  if (!reportId) return Response.json({ error: "Expected ?report=<id>" }, { status: 400 });

  const lock = new Lock({ id: `report:${reportId}:rebuild`, redis, lease: 15_000, waitUntil });
  try {
    await using held = await lock.acquireOrThrow({ timeout: WAIT_MS, signal: request.signal });
    const version = await rebuildReport(reportId, held.signal);
    return Response.json({ reportId, version });
  } catch (error) {
    if (error instanceof LockAcquisitionError && error.reason !== "redis-error") {
      return Response.json({ error: `Report ${reportId} is being rebuilt` }, { status: 409 });
    }
    throw error;
  }
}

/** Stands in for the real rebuild; the example's test swaps in its own. */
export const work = {
  rebuildReport: async (reportId: string, _signal: AbortSignal): Promise<number> =>
    redis.incr(`report:${reportId}:version`),
};
function rebuildReport(reportId: string, signal: AbortSignal): Promise<number> {
  return work.rebuildReport(reportId, signal);
}
