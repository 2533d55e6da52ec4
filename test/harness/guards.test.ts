// The suite's guards work: a run in which a test leaves a rejection unhandled, or writes to
// console.error or console.warn, fails and says why, even though every assertion passed. Each case
// runs vitest in a child process on a fixture that misbehaves on purpose.
import { execFile } from "node:child_process";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const VITEST = fileURLToPath(new URL("../../node_modules/vitest/vitest.mjs", import.meta.url));
const CONFIG = fileURLToPath(new URL("./guards.config.ts", import.meta.url));

interface Run {
  code: number;
  output: string;
}

/** Runs one fixture under the harness configuration; resolves with the exit code and all output. */
function runFixture(name: string): Promise<Run> {
  // The outer vitest's own variables would tell the inner one it runs inside a worker.
  const env = Object.fromEntries(
    Object.entries(process.env).filter(([key]) => !key.startsWith("VITEST") && key !== "NODE_ENV"),
  );
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      [VITEST, "run", "--config", CONFIG, `test/harness/fixtures/${name}.fixture.ts`],
      { cwd: ROOT, env: { ...env, NO_COLOR: "1", CI: "1" }, timeout: 60_000 },
      (error, stdout, stderr) => {
        const output = `${stdout}\n${stderr}`;
        if (error && typeof error.code !== "number") reject(Object.assign(error, { output }));
        else resolve({ code: typeof error?.code === "number" ? error.code : 0, output });
      },
    );
  });
}

describe("the suite's guards", () => {
  it("control: the harness configuration passes a well-behaved fixture", async () => {
    const run = await runFixture("passes");
    expect(run.code, run.output).toBe(0);
    expect(run.output).toMatch(/Tests\s+1 passed/);
  }, 60_000);

  it("an unhandled rejection fails the run, and the report names it and the test", async () => {
    const run = await runFixture("unhandled-rejection");
    expect(run.code, run.output).not.toBe(0);
    // Every assertion passed: the failure is the rejection alone.
    expect(run.output).toMatch(/Tests\s+1 passed/);
    expect(run.output).toContain("Unhandled Rejection");
    expect(run.output).toContain("fixture: a rejection nobody handles");
    expect(run.output).toContain("leaves a rejection unhandled");
  }, 60_000);

  it("console.error or console.warn during a test fails that test, quoting what was printed", async () => {
    const run = await runFixture("console-error");
    expect(run.code, run.output).not.toBe(0);
    expect(run.output).toMatch(/Tests\s+2 failed/);
    expect(run.output).toContain("Unexpected console output during the test");
    expect(run.output).toContain("fixture: an unexpected error message");
    expect(run.output).toContain("fixture: an unexpected warning");
  }, 60_000);
});
