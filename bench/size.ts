import { spawnSync } from "node:child_process";
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { brotliCompressSync, gzipSync, constants as zlib } from "node:zlib";
import { build } from "esbuild";
import { packageVersion } from "./environment";

export interface BundleSize {
  readonly name: string;
  /** What was measured, and how. */
  readonly source: string;
  readonly minifiedBytes: number;
  readonly gzipBytes: number;
  readonly brotliBytes: number;
}

export interface SizeResults {
  readonly entries: BundleSize[];
  /** Ours (ESM, everything exported) gzipped ÷ 0.2.1's. */
  readonly gzipRatio: number;
  readonly esbuild: string;
  readonly note: string;
}

const root = fileURLToPath(new URL("..", import.meta.url));

/**
 * Section 5: the ESM bundle minified with esbuild (everything the entry exports, nothing external:
 * neither package has runtime dependencies), gzip level 9 and brotli; ours vs 0.2.1's `dist/index.mjs`;
 * plus our browser IIFE as published (tsup already minifies it) and a bundle that imports only `Lock`.
 */
export async function measureSize(log: (line: string) => void): Promise<SizeResults> {
  const note = ensureBuild(log);
  const ours = join(root, "dist/index.js");
  const old = join(root, "node_modules/@upstash/lock-0.2.1/dist/index.mjs");
  const entries: BundleSize[] = [
    await bundle("ours, ESM (all exports)", `esbuild --bundle --minify --format=esm dist/index.js`, {
      entryPoints: [ours],
    }),
    await bundle("ours, ESM (import { Lock } only)", "esbuild --bundle --minify --format=esm, tree-shaken", {
      stdin: { contents: `export { Lock } from ${JSON.stringify(ours)};`, resolveDir: root },
    }),
    await bundle(
      "0.2.1, ESM",
      "esbuild --bundle --minify --format=esm node_modules/@upstash/lock-0.2.1/dist/index.mjs",
      { entryPoints: [old] },
    ),
    measured(
      "ours, IIFE (dist/index.global.js, as published)",
      "tsup --minify output",
      readFileSync(join(root, "dist/index.global.js")),
    ),
  ];
  const [main, , previous] = entries as [BundleSize, BundleSize, BundleSize, BundleSize];
  return {
    entries,
    gzipRatio: Math.round((main.gzipBytes / previous.gzipBytes) * 100) / 100,
    esbuild: packageVersion("esbuild"),
    note,
  };
}

async function bundle(name: string, source: string, input: Parameters<typeof build>[0]): Promise<BundleSize> {
  const output = await build({
    ...input,
    bundle: true,
    minify: true,
    format: "esm",
    platform: "neutral",
    target: "es2022",
    write: false,
    logLevel: "silent",
  });
  const file = output.outputFiles?.[0];
  if (!file) throw new Error(`esbuild produced nothing for ${name}`);
  return measured(name, source, Buffer.from(file.contents));
}

function measured(name: string, source: string, bytes: Buffer): BundleSize {
  return {
    name,
    source,
    minifiedBytes: bytes.length,
    gzipBytes: gzipSync(bytes, { level: 9 }).length,
    brotliBytes: brotliCompressSync(bytes, { params: { [zlib.BROTLI_PARAM_QUALITY]: 11 } }).length,
  };
}

/** Builds dist/ when it is missing or older than src/ (sizes must describe the code as it is). */
function ensureBuild(log: (line: string) => void): string {
  const dist = join(root, "dist/index.js");
  const global = join(root, "dist/index.global.js");
  const built = existsSync(dist) && existsSync(global) ? Math.min(mtime(dist), mtime(global)) : 0;
  const newestSource = newestMtime(join(root, "src"));
  if (built >= newestSource) return "dist/ was up to date with src/";
  log(built === 0 ? "  dist/ is missing: npm run build" : "  dist/ is older than src/: npm run build");
  const result = spawnSync("npm", ["run", "build"], { cwd: root, encoding: "utf8" });
  if (result.status !== 0) throw new Error(`npm run build failed:\n${result.stdout}\n${result.stderr}`);
  return "dist/ was rebuilt (npm run build) before measuring";
}

function mtime(path: string): number {
  return statSync(path).mtimeMs;
}

function newestMtime(directory: string): number {
  let newest = 0;
  for (const entry of readdirSync(directory, { withFileTypes: true })) {
    const path = join(directory, entry.name);
    newest = Math.max(newest, entry.isDirectory() ? newestMtime(path) : mtime(path));
  }
  return newest;
}
