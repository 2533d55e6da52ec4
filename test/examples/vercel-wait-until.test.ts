import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { Lock } from "../../src/index";
import { within } from "../faults/support/time";
import { type PassThrough, startPassThrough } from "../support/pass-through";
import { newRedis, uniqueId } from "../support/redis";
import { type ServedRoute, serveRoute } from "./support/serve-route";
import { useUpstashEnv } from "./support/upstash-env";

// examples/vercel-wait-until.ts served over real HTTP, its Redis reached through a pass-through that can
// slow requests down, and Vercel's request context stood in for by one that records what waitUntil gets:
// `@vercel/functions` hands each promise to `globalThis[Symbol.for("@vercel/request-context")].get().waitUntil`.
const env = useUpstashEnv();
const redis = newRedis();
let wire: PassThrough;
let served: ServedRoute;
let example: typeof import("../../examples/vercel-wait-until");
const handedToPlatform: Promise<unknown>[] = [];
const CONTEXT = Symbol.for("@vercel/request-context");

beforeAll(async () => {
  wire = await startPassThrough({ target: inject("upstashUrl") });
  // The example reads the credentials when it is imported: point them at the pass-through first.
  process.env.UPSTASH_REDIS_REST_URL = wire.url;
  (globalThis as Record<symbol, unknown>)[CONTEXT] = {
    get: () => ({ waitUntil: (promise: Promise<unknown>) => handedToPlatform.push(promise) }),
  };
  example = await import("../../examples/vercel-wait-until");
  served = await serveRoute(example.POST);
});

afterAll(async () => {
  delete (globalThis as Record<symbol, unknown>)[CONTEXT];
  process.env.UPSTASH_REDIS_REST_URL = env.UPSTASH_REDIS_REST_URL;
  await served?.close();
  await wire?.close();
});

const rebuild = (reportId: string) =>
  fetch(`${served.url}/api/reports/rebuild?report=${encodeURIComponent(reportId)}`, { method: "POST" });

describe("examples/vercel-wait-until.ts", () => {
  it("rebuilds under the lock and releases it before answering", async () => {
    const reportId = uniqueId("report");
    const response = await rebuild(reportId);
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ reportId, version: 1 });
    expect(await redis.exists(`report:${reportId}:rebuild`)).toBe(0);
  });

  it("a try still in flight when the wait runs out is released through waitUntil", async () => {
    const reportId = uniqueId("report");
    const key = `report:${reportId}:rebuild`;
    const holder = new Lock({ id: key, redis, lease: 30_000 });
    await holder.acquireOrThrow();
    // Every request the route sends now takes 2.5 s to reach Redis: its first try, sent while the lock
    // is held, is still on its way when the 2 s wait ends; the holder releases meanwhile.
    wire.faults.latency(2_500);
    const answering = rebuild(reportId);
    await new Promise((resolve) => setTimeout(resolve, 100));
    await holder.release();
    const response = await answering;
    // No answer from Redis at all within the wait: an outage as far as the route can tell ("redis-error"),
    // which it throws (500), not "being rebuilt" (409).
    expect(response.status).toBe(500);
    await response.text();
    // The late try took the lock after the response; its release was handed to the platform.
    expect(handedToPlatform.length).toBeGreaterThanOrEqual(1);
    wire.faults.latency(0);
    await within(Promise.all(handedToPlatform), 10_000, "the work handed to waitUntil");
    expect(await redis.exists(key)).toBe(0);
  }, 15_000);

  it("answers 400 without a report id", async () => {
    const response = await fetch(`${served.url}/api/reports/rebuild`, { method: "POST" });
    expect(response.status).toBe(400);
    await response.json();
  });
});
