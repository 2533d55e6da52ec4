// What the demo's server serves, made once at startup: the built package (built first when a file of dist/ is
// missing or older than src/), @upstash/redis bundled for the browser, and the page's own script.

import { spawn } from "node:child_process";
import { readdir, readFile, stat } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { type Asset, bundleForBrowser, bundleUpstashRedis, js } from "../support/static-site";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const HERE = fileURLToPath(new URL(".", import.meta.url));
const BUILT = join(ROOT, "dist/index.js");

/** The newest modification time under `path`, in ms. */
async function newest(path: string): Promise<number> {
  const info = await stat(path);
  if (!info.isDirectory()) return info.mtimeMs;
  const entries = await readdir(path);
  const times = await Promise.all(entries.map((entry) => newest(join(path, entry))));
  return Math.max(info.mtimeMs, ...times);
}

/** Every file `npm run build` writes: a build cut short (Ctrl-C) leaves some missing, or older than src/. */
const OUTPUTS = ["index.js", "index.cjs", "index.d.ts", "index.d.cts", "index.global.js"];

/** Whether `root`'s dist/ lacks a build output, or has one older than its src/ or tsup.config.ts. */
export async function isStale(root = ROOT): Promise<boolean> {
  const times = await Promise.all(
    OUTPUTS.map((name) =>
      stat(join(root, "dist", name)).then(
        (info) => info.mtimeMs,
        () => undefined,
      ),
    ),
  );
  if (times.includes(undefined)) return true;
  const built = Math.min(...(times as number[]));
  const sources = Math.max(await newest(join(root, "src")), await newest(join(root, "tsup.config.ts")));
  return sources > built;
}

/** Runs `npm run build` when dist/ is missing or stale; its output goes to stderr. */
export async function ensureBuilt(): Promise<void> {
  if (!(await isStale())) return;
  process.stderr.write("dist/ is missing or older than src/: npm run build\n");
  const child = spawn("npm", ["run", "build"], {
    cwd: ROOT,
    stdio: ["ignore", process.stderr, process.stderr],
  });
  const code = await new Promise<number | null>((resolve, reject) => {
    child.once("error", reject);
    child.once("exit", resolve);
  });
  if (code !== 0) throw new Error(`npm run build exited with ${code}`);
}

/** Every path the page loads, with its content. Call {@link ensureBuilt} first. */
export async function pageAssets(): Promise<Record<string, Asset>> {
  const [html, css, lock, redis, page] = await Promise.all([
    readFile(join(HERE, "page.html"), "utf8"),
    readFile(join(HERE, "page.css"), "utf8"),
    readFile(BUILT, "utf8"),
    // @upstash/redis from node_modules as one browser module, as a bundler would ship it.
    bundleUpstashRedis(ROOT),
    // The page's TypeScript; both libraries stay imports, which the page's import map resolves.
    bundleForBrowser({
      entryPoints: [join(HERE, "page/main.ts")],
      external: ["@upstash/lock", "@upstash/redis"],
    }),
  ]);
  return {
    "/": { type: "text/html; charset=utf-8", body: html },
    "/page.css": { type: "text/css; charset=utf-8", body: css },
    "/page.js": js(page),
    "/lib/upstash-lock.js": js(lock),
    "/lib/upstash-redis.js": js(redis),
  };
}
