// The web demo's server: a local stack (redis-server and the Upstash REST proxy, which answers
// browsers' CORS preflights) and one page on 127.0.0.1 that runs the workers against it.

import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import { type LocalStack, startLocalStack } from "../../stack/local-stack";
import { serveAssets } from "../support/static-site";
import { ensureBuilt, pageAssets } from "./assets";

export interface WebDemoOptions {
  /**
   * Port of the page; 0 picks a free one.
   * @default 0
   */
  readonly port?: number;
}

export interface WebDemo {
  /** The page, e.g. `http://127.0.0.1:40123/`. */
  readonly url: string;
  /** The stack the page's clients talk to. */
  readonly stack: LocalStack;
  /** Stops the page's server, then the proxy and the redis-server. Safe to call twice. */
  stop(): Promise<void>;
}

export async function startWebDemo(options: WebDemoOptions = {}): Promise<WebDemo> {
  await ensureBuilt();
  // Made before anything is started, so that a failure here leaves nothing to stop.
  const assets = await pageAssets();
  const stack = await startLocalStack();
  let server: Server;
  try {
    const config = JSON.stringify({ url: stack.url, token: stack.token });
    server = await serveAssets(
      { ...assets, "/config.json": { type: "application/json", body: config } },
      options.port ?? 0,
    );
  } catch (error) {
    await stack.stop();
    throw error;
  }
  let stopping: Promise<void> | undefined;
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/`,
    stack,
    stop() {
      stopping ??= new Promise<void>((resolve) => {
        server.close(() => resolve());
        // The page keeps idle keep-alive connections open; they must not hold the close up.
        server.closeAllConnections();
      }).then(() => stack.stop());
      return stopping;
    },
  };
}
