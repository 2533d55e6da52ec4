import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ScenarioResult } from "./fixtures/scenario";
import {
  type Consumer,
  compileScenario,
  fixture,
  installBuiltPackage,
  writeProgram,
} from "./support/built-package";
import { expectScenarioPassed } from "./support/expect-scenario";
import { runForJson, runtimeEnv } from "./support/runtime-process";

// Node 20 has `Symbol.asyncDispose` but not the `await using` syntax, so the scenario is lowered by esbuild
// here, as a TypeScript or bundler build would lower it for Node 20 users.
type NodeResult = ScenarioResult & { resolved: string };

let consumer: Consumer;

beforeAll(async () => {
  consumer = await installBuiltPackage();
});

afterAll(() => consumer?.remove());

describe(`Node ${process.version}, the built package from node_modules`, () => {
  it("ESM: import from '@upstash/lock' gets dist/index.js, and the scenario passes", async () => {
    const dir = writeProgram(consumer, "node-esm", {
      "entry.mjs": fixture("entry.mjs"),
      "scenario.mjs": await compileScenario("esm", "transpiled"),
    });
    const result = await runForJson<NodeResult>(process.execPath, ["entry.mjs"], {
      cwd: dir,
      env: runtimeEnv("node-esm"),
    });
    expect(result.resolved).toMatch(/\/node_modules\/@upstash\/lock\/dist\/index\.js$/);
    expectScenarioPassed(result, /^node v?20\./, "transpiled");
  });

  it("CommonJS: require('@upstash/lock') gets dist/index.cjs, and the scenario passes", async () => {
    const dir = writeProgram(consumer, "node-cjs", {
      "entry.cjs": fixture("entry.cjs"),
      "scenario.cjs": await compileScenario("cjs", "transpiled"),
    });
    const result = await runForJson<NodeResult>(process.execPath, ["entry.cjs"], {
      cwd: dir,
      env: runtimeEnv("node-cjs"),
    });
    expect(result.resolved).toMatch(/\/node_modules\/@upstash\/lock\/dist\/index\.cjs$/);
    expectScenarioPassed(result, /^node v?20\./, "transpiled");
  });
});
