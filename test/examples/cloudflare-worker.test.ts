import { join } from "node:path";
import { build } from "esbuild";
import type { Miniflare } from "miniflare";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { repoRoot } from "../runtimes/support/built-package";
import { probe, skipIfUnavailable, titled } from "../runtimes/support/runtime-process";
import { newRedis, uniqueId } from "../support/redis";

// examples/cloudflare-worker.ts bundled as wrangler bundles a Worker (esbuild, target es2022, Workers
// conditions) and served by workerd through miniflare, with the credentials as bindings.
const availability = probe(join(repoRoot, "node_modules/workerd/bin/workerd"));
const redis = newRedis();
let miniflare: Miniflare | undefined;

beforeAll(async () => {
  if (!availability.available) return;
  const bundle = await build({
    entryPoints: [join(repoRoot, "examples/cloudflare-worker.ts")],
    alias: { "@upstash/lock": join(repoRoot, "src/index.ts") },
    bundle: true,
    write: false,
    format: "esm",
    platform: "browser",
    conditions: ["workerd", "worker", "browser"],
    target: "es2022",
    logLevel: "silent",
  });
  const { Miniflare } = await import("miniflare");
  miniflare = new Miniflare({
    modules: [{ type: "ESModule", path: "worker.mjs", contents: bundle.outputFiles[0]?.text ?? "" }],
    compatibilityDate: "2025-09-01",
    bindings: {
      UPSTASH_REDIS_REST_URL: inject("upstashUrl"),
      UPSTASH_REDIS_REST_TOKEN: inject("upstashToken"),
    },
  });
  await miniflare.ready;
});

afterAll(async () => {
  await miniflare?.dispose();
});

async function rebuild(reportId: string): Promise<{ status: number; body: unknown }> {
  const response = await (miniflare as Miniflare).dispatchFetch(
    `http://worker.test/reports/${reportId}/rebuild`,
    {
      method: "POST",
    },
  );
  return { status: response.status, body: await response.json() };
}

describe("examples/cloudflare-worker.ts in workerd (miniflare)", () => {
  it(
    titled("rebuilds under the lock, answers 409 while another rebuild holds it", availability),
    async (context) => {
      skipIfUnavailable(context, availability);
      const reportId = uniqueId("report").replaceAll(":", "-");
      expect(await rebuild(reportId)).toEqual({ status: 200, body: { reportId, version: 1 } });
      expect(await rebuild(reportId)).toEqual({ status: 200, body: { reportId, version: 2 } });
      expect(await redis.exists(`report:${reportId}`)).toBe(0);

      await redis.set(`report:${reportId}`, "another-rebuild", { px: 5_000 });
      expect(await rebuild(reportId)).toEqual({
        status: 409,
        body: { error: `Report ${reportId} is being rebuilt` },
      });
      expect(await redis.get(`report:${reportId}:version`)).toBe(2);
      await redis.del(`report:${reportId}`, `report:${reportId}:version`);
    },
  );

  it(titled("answers 404 to anything but POST /reports/:id/rebuild", availability), async (context) => {
    skipIfUnavailable(context, availability);
    const response = await (miniflare as Miniflare).dispatchFetch("http://worker.test/reports/x/rebuild");
    expect(response.status).toBe(404);
    await response.text();
  });
});
