// A static site for a browser on 127.0.0.1, as the web demo and the browser runtime test serve one:
// a fixed set of paths and their contents, and browser modules bundled with esbuild.

import { createServer, type Server } from "node:http";
import { build } from "esbuild";

/** One path's content and its content type. */
export interface Asset {
  readonly type: string;
  readonly body: string;
}

export const html = (body: string): Asset => ({ type: "text/html; charset=utf-8", body });
export const js = (body: string): Asset => ({ type: "text/javascript; charset=utf-8", body });

/**
 * Serves `assets` (path → asset) on 127.0.0.1; any other path is a 404. Nothing is cached.
 * @param port 0 picks a free one.
 */
export function serveAssets(assets: Record<string, Asset>, port = 0): Promise<Server> {
  const server = createServer((req, res) => {
    const asset = assets[new URL(req.url ?? "/", "http://page.invalid").pathname];
    res.writeHead(asset ? 200 : 404, {
      "content-type": asset?.type ?? "text/plain; charset=utf-8",
      "cache-control": "no-store",
    });
    res.end(asset?.body ?? "not found");
  });
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, "127.0.0.1", () => resolve(server));
  });
}

/** One ES module for the browser (es2022), bundled in memory. */
export async function bundleForBrowser(options: Parameters<typeof build>[0]): Promise<string> {
  const result = await build({
    bundle: true,
    write: false,
    format: "esm",
    platform: "browser",
    target: "es2022",
    logLevel: "silent",
    ...options,
  });
  return result.outputFiles?.[0]?.text ?? "";
}

/** `@upstash/redis`, as found from `resolveDir`, as one browser module, as a bundler would ship it. */
export function bundleUpstashRedis(resolveDir: string): Promise<string> {
  return bundleForBrowser({
    stdin: { contents: 'export * from "@upstash/redis";', resolveDir, sourcefile: "upstash-redis.js" },
  });
}
