// A Cloudflare Worker (module syntax). `@upstash/redis/cloudflare` reads the credentials from the Worker's
// bindings (set them with `wrangler secret put UPSTASH_REDIS_REST_URL` and `..._TOKEN`); the lock needs
// no `nodejs_compat` flag. It gets the Worker's `ctx.waitUntil`: a wait that times out while a try is in
// flight releases what that try may take in the background, after the response, and the Worker runtime
// would otherwise cancel that release.
import { Lock, LockAcquisitionError } from "@upstash/lock";
import { Redis } from "@upstash/redis/cloudflare";

export interface Env {
  UPSTASH_REDIS_REST_URL: string;
  UPSTASH_REDIS_REST_TOKEN: string;
}

/** The part of the Worker's `ExecutionContext` the example uses (`@cloudflare/workers-types` has it all). */
export interface Context {
  waitUntil(promise: Promise<unknown>): void;
}

const REBUILD = /^\/reports\/([\w-]+)\/rebuild$/;

export default {
  /**
   * `POST /reports/:id/rebuild`: rebuilds one report, never two rebuilds of it at once. A request that finds a
   * rebuild running waits up to a second for it, then answers 409.
   */
  async fetch(request: Request, env: Env, ctx: Context): Promise<Response> {
    const reportId = REBUILD.exec(new URL(request.url).pathname)?.[1];
    if (request.method !== "POST" || reportId === undefined) {
      return new Response("Not found", { status: 404 });
    }
    const redis = Redis.fromEnv(env);
    try {
      const waitUntil = (promise: Promise<unknown>) => ctx.waitUntil(promise);
      await using lock = await new Lock({
        id: `report:${reportId}`,
        redis,
        lease: 10_000,
        waitUntil,
      }).acquireOrThrow({ timeout: 1_000 });
      const version = await rebuild(redis, lock.id);
      return Response.json({ reportId, version });
    } catch (error) {
      if (error instanceof LockAcquisitionError && error.reason !== "redis-error") {
        return Response.json({ error: `Report ${reportId} is being rebuilt` }, { status: 409 });
      }
      throw error;
    } // released here, before the response leaves the Worker
  },
};

/** Stands in for the real rebuild: bumps the report's version, so a test can count rebuilds. */
async function rebuild(redis: Redis, lockId: string): Promise<number> {
  return redis.incr(`${lockId}:version`);
}
