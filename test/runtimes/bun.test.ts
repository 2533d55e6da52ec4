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

// Bun from its npm package (a dev dependency), never a download. `--no-install` keeps Bun from fetching a
// package it cannot find in node_modules: everything it needs is already there.
const bun = join(repoRoot, "node_modules/.bin/bun");
const availability = probe(bun);

let consumer: Consumer;

beforeAll(async () => {
  if (availability.available) consumer = await installBuiltPackage();
});

afterAll(() => consumer?.remove());

describe("Bun, the built package from node_modules", () => {
  it(
    titled(
      "imports '@upstash/lock' as ESM, runs `await using` natively, and the scenario passes",
      availability,
    ),
    async (context) => {
      skipIfUnavailable(context, availability);
      const dir = writeProgram(consumer, "bun", {
        "entry.mjs": fixture("entry.mjs"),
        "scenario.mjs": await compileScenario("esm", "native"),
      });
      const result = await runForJson<ScenarioResult & { resolved: string }>(
        bun,
        ["--no-install", "run", "entry.mjs"],
        { cwd: dir, env: runtimeEnv("bun") },
      );
      expect(result.resolved).toMatch(/\/node_modules\/@upstash\/lock\/dist\/index\.js$/);
      expectScenarioPassed(result, /^bun 1\./, "native");
    },
  );
});
