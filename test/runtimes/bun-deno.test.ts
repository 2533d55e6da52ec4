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

/** Bun and Deno from their npm packages (dev dependencies), never a download. */
const runtimes = [
  {
    name: "Bun",
    label: "bun",
    version: /^bun 1\./,
    // `--no-install` keeps Bun from fetching a package it cannot find in node_modules: everything it needs
    // is already there.
    args: ["--no-install", "run", "entry.mjs"],
    env: () => runtimeEnv("bun"),
  },
  {
    name: "Deno",
    label: "deno",
    version: /^deno 2\./,
    // `--node-modules-dir=manual` makes Deno resolve bare specifiers from the consumer's package.json and
    // node_modules, as in a Node project, and `--cached-only` forbids fetching anything; its cache dir is the
    // consumer's own, so runs start clean.
    args: [
      "run",
      "--allow-net=127.0.0.1",
      "--allow-env",
      "--allow-read",
      "--node-modules-dir=manual",
      "--cached-only",
      "--no-lock",
      "entry.mjs",
    ],
    env: (consumer: Consumer) => ({ ...runtimeEnv("deno"), DENO_DIR: join(consumer.dir, ".deno") }),
  },
].map((runtime) => {
  const binary = join(repoRoot, "node_modules/.bin", runtime.label);
  return { ...runtime, binary, availability: probe(binary) };
});

let consumer: Consumer;

beforeAll(async () => {
  if (runtimes.some(({ availability }) => availability.available)) consumer = await installBuiltPackage();
});

afterAll(() => consumer?.remove());

describe.each(runtimes)("$name, the built package from node_modules", (runtime) => {
  const { availability } = runtime;
  it(
    titled(
      "imports '@upstash/lock' as ESM, runs `await using` natively, and the scenario passes",
      availability,
    ),
    async (context) => {
      skipIfUnavailable(context, availability);
      const dir = writeProgram(consumer, runtime.label, {
        "entry.mjs": fixture("entry.mjs"),
        "scenario.mjs": await compileScenario("esm", "native"),
      });
      const result = await runForJson<ScenarioResult & { resolved: string }>(runtime.binary, runtime.args, {
        cwd: dir,
        env: runtime.env(consumer),
      });
      expect(result.resolved).toMatch(/\/node_modules\/@upstash\/lock\/dist\/index\.js$/);
      expectScenarioPassed(result, runtime.version, "native");
    },
  );
});
