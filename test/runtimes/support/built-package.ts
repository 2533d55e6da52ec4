import { execFile } from "node:child_process";
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { transform } from "esbuild";

const run = promisify(execFile);

export const repoRoot = fileURLToPath(new URL("../../../", import.meta.url));
export const fixtures = fileURLToPath(new URL("../fixtures/", import.meta.url));

/** What the build must have produced before a runtime test can import the package as users do. */
const BUILD_OUTPUTS = ["dist/index.js", "dist/index.cjs", "dist/index.global.js", "dist/index.d.ts"];

/** A throwaway project whose node_modules holds the packed package, as `npm install` would leave it. */
export interface Consumer {
  /** The project folder; its node_modules has `@upstash/lock`, `@upstash/redis` and `uncrypto`. */
  readonly dir: string;
  /** The packed tarball. */
  readonly tarball: string;
  /** The installed package, `<dir>/node_modules/@upstash/lock`. */
  readonly packageDir: string;
  remove(): void;
}

/**
 * Packs the built package with `npm pack` (so only the files users receive are there) and installs it into a
 * new folder under the system temp dir, next to copies of `@upstash/redis` and its one dependency. Nothing is
 * downloaded.
 *
 * @throws Error saying what to run when dist/ is missing or older than src/.
 */
export async function installBuiltPackage(): Promise<Consumer> {
  assertBuildIsCurrent();
  const dir = mkdtempSync(join(tmpdir(), "lock-runtime-"));
  try {
    // --ignore-scripts: a prepack script must never rebuild dist/ under another test's feet.
    const { stdout } = await run("npm", ["pack", "--json", "--ignore-scripts", "--pack-destination", dir], {
      cwd: repoRoot,
      env: { ...process.env, npm_config_loglevel: "error", npm_config_update_notifier: "false" },
    });
    const [packed] = JSON.parse(stdout) as [{ filename: string }];
    const tarball = join(dir, packed.filename);
    const packageDir = join(dir, "node_modules/@upstash/lock");
    mkdirSync(packageDir, { recursive: true });
    await run("tar", ["-xzf", tarball, "-C", packageDir, "--strip-components=1"]);
    for (const dependency of ["@upstash/redis", "uncrypto"]) {
      cpSync(join(repoRoot, "node_modules", dependency), join(dir, "node_modules", dependency), {
        recursive: true,
      });
    }
    const version = (name: string) =>
      (
        JSON.parse(readFileSync(join(dir, "node_modules", name, "package.json"), "utf8")) as {
          version: string;
        }
      ).version;
    writeFileSync(
      join(dir, "package.json"),
      JSON.stringify({
        name: "lock-runtime-consumer",
        private: true,
        type: "module",
        dependencies: {
          "@upstash/lock": version("@upstash/lock"),
          "@upstash/redis": version("@upstash/redis"),
        },
      }),
    );
    return { dir, tarball, packageDir, remove: () => rmSync(dir, { recursive: true, force: true }) };
  } catch (error) {
    rmSync(dir, { recursive: true, force: true });
    throw error;
  }
}

/**
 * The runtime tests exercise dist/, so it must exist and be newer than every source file: a stale build
 * would test yesterday's code. `npm test` builds before it runs the tests.
 */
function assertBuildIsCurrent(): void {
  const sources = readdirSync(join(repoRoot, "src"), { recursive: true, encoding: "utf8" });
  const newestSource = Math.max(...sources.map((file) => statSync(join(repoRoot, "src", file)).mtimeMs));
  for (const file of BUILD_OUTPUTS) {
    const path = join(repoRoot, file);
    if (!existsSync(path)) {
      throw new Error(
        `${file} is missing: the runtime tests import the built package, run \`npm run build\` first`,
      );
    }
    if (statSync(path).mtimeMs < newestSource) {
      throw new Error(`${file} is older than src/: run \`npm run build\` before the runtime tests`);
    }
  }
}

/** How a runtime gets `await using`: as written, or lowered by esbuild to what ES2022 runtimes understand. */
export type AwaitUsingSyntax = "native" | "transpiled";

/**
 * Compiles `fixtures/scenario.ts` to JavaScript for one runtime: ESM or CommonJS, with `await using` kept for
 * runtimes that have the syntax and lowered for the others.
 */
export async function compileScenario(format: "esm" | "cjs", syntax: AwaitUsingSyntax): Promise<string> {
  const source = readFileSync(join(fixtures, "scenario.ts"), "utf8");
  const { code } = await transform(source, {
    loader: "ts",
    format,
    target: syntax === "native" ? "esnext" : "es2022",
    define: { AWAIT_USING_SYNTAX: JSON.stringify(syntax) },
    sourcefile: "scenario.ts",
  });
  if (syntax === "native" && !/\bawait using\b/.test(code)) {
    throw new Error("esbuild lowered `await using` although the target keeps it");
  }
  return code;
}

/** Writes `files` (name → contents) into a new folder `name` of the consumer and returns its path. */
export function writeProgram(consumer: Consumer, name: string, files: Record<string, string>): string {
  const dir = join(consumer.dir, name);
  mkdirSync(dir, { recursive: true });
  for (const [file, contents] of Object.entries(files)) writeFileSync(join(dir, file), contents);
  return dir;
}

/** A fixture file's text. */
export function fixture(name: string): string {
  return readFileSync(join(fixtures, name), "utf8");
}
