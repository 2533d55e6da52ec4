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

/** What a user imports, and what it costs: each a bundle of its own, tree-shaken from dist/index.js. */
export const IMPORTS = [
  { name: "import { Lock }", exports: ["Lock"] },
  { name: "import { FairLock }", exports: ["FairLock"] },
  { name: "import { Semaphore }", exports: ["Semaphore"] },
  { name: "import { Lock, quorum }", exports: ["Lock", "quorum"] },
  { name: "import { enableWakeUps }", exports: ["enableWakeUps"] },
  { name: "import { Debounce }", exports: ["Debounce"] },
] as const;

/** `import { Lock }` from src/'s modules instead of the one-file dist: what the build's layout costs. */
export const LOCK_FROM_SOURCE = "import { Lock }, from src/ (one module per file)";

/** The name of the bundle of everything ours exports. */
export const ALL_EXPORTS = "ours, all exports";

const root = fileURLToPath(new URL("..", import.meta.url));

/**
 * Section 5: ESM bundles minified with esbuild for a neutral platform (nothing external: neither
 * package has runtime dependencies), gzip level 9 and brotli quality 11: one per import a user may
 * write ({@link IMPORTS}), all of ours, 0.2.1's `dist/index.mjs`, and our browser IIFE as published.
 */
export async function measureSize(log: (line: string) => void): Promise<SizeResults> {
  const note = ensureBuild(log);
  const ours = join(root, "dist/index.js");
  const old = join(root, "node_modules/@upstash/lock-0.2.1/dist/index.mjs");
  const shaken = IMPORTS.map(({ name, exports }) =>
    bundle(name, `export { ${exports.join(", ")} } from "dist/index.js"`, {
      stdin: { contents: `export { ${exports.join(", ")} } from ${JSON.stringify(ours)};`, resolveDir: root },
    }),
  );
  const entries: BundleSize[] = [
    ...(await Promise.all(shaken)),
    // dist/index.js is one module, whose top-level calls (each `defineScript`, the fair store)
    // esbuild must keep though nothing uses them; per module, `sideEffects: false` drops them.
    await bundle(LOCK_FROM_SOURCE, 'export { Lock } from "src/index.ts"', {
      stdin: { contents: 'export { Lock } from "./src/index.ts";', resolveDir: root, loader: "ts" },
    }),
    await bundle(ALL_EXPORTS, "dist/index.js", { entryPoints: [ours] }),
    await bundle("0.2.1, all exports", "node_modules/@upstash/lock-0.2.1/dist/index.mjs", {
      entryPoints: [old],
    }),
    measured(
      "ours, IIFE (dist/index.global.js, as published)",
      "tsup --minify output",
      readFileSync(join(root, "dist/index.global.js")),
    ),
  ];
  const all = entries.find((entry) => entry.name === ALL_EXPORTS) as BundleSize;
  const previous = entries.find((entry) => entry.name === "0.2.1, all exports") as BundleSize;
  return {
    entries,
    gzipRatio: Math.round((all.gzipBytes / previous.gzipBytes) * 100) / 100,
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
