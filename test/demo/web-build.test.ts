// demo:web builds dist/ first when it is stale. A build cut short (Ctrl-C while tsup writes, after its
// `clean` emptied dist/) leaves index.js newer than src/ but no declarations: that is stale too.
import { mkdir, mkdtemp, rm, utimes, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { isStale } from "../../scripts/web-demo/assets";

const OUTPUTS = ["index.js", "index.cjs", "index.d.ts", "index.d.cts", "index.global.js"];
const roots: string[] = [];

/** A project with src/ written at `sourceAt` and the given dist/ files at `builtAt` (seconds since 1970). */
async function project(built: readonly string[], sourceAt = 1_000, builtAt = 2_000): Promise<string> {
  const root = await mkdtemp(join(tmpdir(), "web-build-"));
  roots.push(root);
  await mkdir(join(root, "src"));
  await mkdir(join(root, "dist"));
  for (const path of ["src/index.ts", "tsup.config.ts"]) {
    await writeFile(join(root, path), "");
    await utimes(join(root, path), sourceAt, sourceAt);
  }
  await utimes(join(root, "src"), sourceAt, sourceAt);
  for (const name of built) {
    await writeFile(join(root, "dist", name), "");
    await utimes(join(root, "dist", name), builtAt, builtAt);
  }
  return root;
}

afterEach(async () => {
  for (const root of roots.splice(0)) await rm(root, { recursive: true, force: true });
});

describe("demo:web's check that dist/ is built", () => {
  it("finds a complete build newer than src/ fresh", async () => {
    expect(await isStale(await project(OUTPUTS))).toBe(false);
  });

  it("finds a build without its declarations stale, though index.js is newer than src/", async () => {
    expect(await isStale(await project(["index.js", "index.cjs"]))).toBe(true);
  });

  it("finds a build older than src/ stale", async () => {
    expect(await isStale(await project(OUTPUTS, 3_000, 2_000))).toBe(true);
  });
});
