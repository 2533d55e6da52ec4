import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
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
import { probe, runForJson, runtimeEnv, skipIfUnavailable, titled } from "./support/runtime-process";

// Deno from its npm package (a dev dependency), never a download. `--node-modules-dir=manual` makes Deno
// resolve bare specifiers from the consumer's package.json and node_modules, as in a Node project, and
// `--cached-only` forbids fetching anything; its cache dir is the consumer's own, so runs start clean.
const deno = join(repoRoot, "node_modules/.bin/deno");
const availability = probe(deno);

let consumer: Consumer;

beforeAll(async () => {
  if (availability.available) consumer = await installBuiltPackage();
});

afterAll(() => consumer?.remove());

describe("Deno, the built package from node_modules", () => {
  it(
    titled(
      "imports '@upstash/lock' as ESM, runs `await using` natively, and the scenario passes",
      availability,
    ),
    async (context) => {
      skipIfUnavailable(context, availability);
      const dir = writeProgram(consumer, "deno", {
        "entry.mjs": fixture("entry.mjs"),
        "scenario.mjs": await compileScenario("esm", "native"),
      });
      const result = await runForJson<ScenarioResult & { resolved: string }>(
        deno,
        [
          "run",
          "--allow-net=127.0.0.1",
          "--allow-env",
          "--allow-read",
          "--node-modules-dir=manual",
          "--cached-only",
          "--no-lock",
          "entry.mjs",
        ],
        { cwd: dir, env: { ...runtimeEnv("deno"), DENO_DIR: join(consumer.dir, ".deno") } },
      );
      expect(result.resolved).toMatch(/\/node_modules\/@upstash\/lock\/dist\/index\.js$/);
      expectScenarioPassed(result, /^deno 2\./, "native");
    },
  );
});
