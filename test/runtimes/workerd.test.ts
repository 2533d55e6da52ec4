import { join } from "node:path";
import { build } from "esbuild";
import type { Miniflare } from "miniflare";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { within } from "../faults/support/time";
import type { ScenarioResult } from "./fixtures/scenario";
import {
  type Consumer,
  compileScenario,
  fixture,
  installBuiltPackage,
  repoRoot,
  writeProgram,
} from "./support/built-package";
import { expectScenarioPassed } from "./support/expect-scenario";
import { probe, skipIfUnavailable, titled, uniquePrefix } from "./support/runtime-process";

// Cloudflare's workerd, through miniflare: both install from npm and run offline. The Worker is bundled from
// the installed package with esbuild under the conditions wrangler uses, then served by workerd, whose
// outbound fetch reaches the suite's proxy on 127.0.0.1 (miniflare's default network allows private
// addresses).
const availability = probe(join(repoRoot, "node_modules/workerd/bin/workerd"));

let consumer: Consumer;
let miniflare: Miniflare | undefined;

beforeAll(async () => {
  if (availability.available) consumer = await installBuiltPackage();
});

afterAll(async () => {
  try {
    await miniflare?.dispose();
  } finally {
    consumer?.remove();
  }
});

/** Bundles `fixtures/worker.mjs` against the consumer's node_modules, as wrangler would. */
async function bundleWorker(dir: string): Promise<string> {
  const result = await build({
    stdin: { contents: fixture("worker.mjs"), resolveDir: dir, sourcefile: "worker.mjs", loader: "js" },
    bundle: true,
    write: false,
    format: "esm",
    platform: "browser",
    conditions: ["workerd", "worker", "browser"],
    target: "esnext",
    logLevel: "silent",
  });
  return result.outputFiles[0]?.text ?? "";
}

describe("Cloudflare workerd (miniflare), the built package bundled into a Worker", () => {
  it(
    titled("runs the scenario with @upstash/redis/cloudflare and native `await using`", availability),
    async (context) => {
      skipIfUnavailable(context, availability);
      const dir = writeProgram(consumer, "workerd", {
        "scenario.mjs": await compileScenario("esm", "native"),
      });
      const script = await bundleWorker(dir);
      const { Miniflare } = await import("miniflare");
      miniflare = new Miniflare({
        // Listed rather than `modules: true`: miniflare's own module scanner (acorn) cannot parse
        // `await using`, which workerd itself runs natively.
        modules: [{ type: "ESModule", path: "worker.mjs", contents: script }],
        compatibilityDate: "2025-09-01",
        bindings: {
          UPSTASH_REDIS_REST_URL: inject("upstashUrl"),
          UPSTASH_REDIS_REST_TOKEN: inject("upstashToken"),
          UPSTASH_DISABLE_TELEMETRY: "1",
        },
      });
      const response = await within(
        miniflare.dispatchFetch(`http://worker.test/?prefix=${encodeURIComponent(uniquePrefix("workerd"))}`),
        20_000,
        "the Worker's answer",
      );
      const text = await within(response.text(), 5_000, "the Worker's body");
      expect(response.status, text).toBe(200);
      expectScenarioPassed(JSON.parse(text) as ScenarioResult, /^workerd$/, "native");
    },
  );
});
