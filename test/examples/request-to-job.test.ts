import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { lastJsonLine, runTypeScript } from "../support/node-process";
import { newRedis, uniqueId } from "../support/redis";
import { type ServedRoute, serveRoute } from "./support/serve-route";
import { useUpstashEnv } from "./support/upstash-env";

// examples/request-to-job.ts end to end: the route handler over real HTTP, the queue in Redis, and the worker
// in a second Node process that only knows what the queue message told it.
const env = useUpstashEnv();
const redis = newRedis();
let example: typeof import("../../examples/request-to-job");
let served: ServedRoute;

beforeAll(async () => {
  example = await import("../../examples/request-to-job");
  served = await serveRoute(example.POST);
});

afterAll(() => served?.close());

beforeEach(async () => {
  await redis.del(example.EXPORT_QUEUE);
});

function requestExport(accountId: string): Promise<Response> {
  return fetch(`${served.url}/api/exports`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ accountId }),
  });
}

async function workerProcess(): Promise<unknown> {
  const worker = new URL("./run-next-export.ts", import.meta.url);
  return lastJsonLine((await runTypeScript(worker, env)).stdout);
}

describe("examples/request-to-job.ts", () => {
  it("the request takes the lock and queues the job; a worker process finishes it and releases", async () => {
    const accountId = uniqueId("account");
    const accepted = await requestExport(accountId);
    expect(accepted.status).toBe(202);
    expect(await accepted.json()).toEqual({ exportId: expect.any(String) });
    expect(await redis.exists(`export:${accountId}`)).toBe(1);

    // Until the worker is done, the account's export stays locked.
    const refused = await requestExport(accountId);
    expect(refused.status).toBe(409);
    expect(await redis.llen(example.EXPORT_QUEUE)).toBe(1);

    expect(await workerProcess()).toEqual({ outcome: "done" });
    expect(await redis.exists(`export:${accountId}`)).toBe(0);
    expect(await redis.llen(example.EXPORT_QUEUE)).toBe(0);
    expect((await requestExport(accountId)).status).toBe(202);
    expect(await example.runNextExport()).toBe("done");
  });

  it("a worker whose job outlived the lease does not run it", async () => {
    const accountId = uniqueId("account");
    const built: string[] = [];
    example.work.buildExport = async (id) => {
      built.push(id);
    };
    expect((await requestExport(accountId)).status).toBe(202);
    await redis.del(`export:${accountId}`); // as if the lease had run out while the job waited
    expect(await example.runNextExport()).toBe("lock-expired");
    expect(built).toEqual([]);
    expect(await example.runNextExport()).toBe("idle");
  });
});
