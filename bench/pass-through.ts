import { Agent, createServer, type IncomingMessage, type RequestOptions, request } from "node:http";
import { Agent as HttpsAgent, request as httpsRequest } from "node:https";
import type { AddressInfo } from "node:net";
import { RequestCounter } from "../test/support/request-counter";

/** A running pass-through. */
export interface CountingPassThrough {
  /** Give this to the client instead of the target URL. */
  readonly url: string;
  /** What crossed it: every request, counted once its body has arrived, answered once the target answered. */
  readonly counter: RequestCounter;
  close(): Promise<void>;
}

const HOP_HEADERS = new Set(["connection", "keep-alive", "host", "proxy-connection", "te", "upgrade"]);

/**
 * An HTTP pass-through on 127.0.0.1 that counts requests, billed commands and bytes (the shared
 * {@link RequestCounter}) on the way to `target`
 * (the local proxy or a remote Upstash endpoint). Bodies stream in both directions, so server-sent
 * event streams (subscriptions) pass through live.
 */
export async function startCountingPassThrough(target: string): Promise<CountingPassThrough> {
  const base = new URL(target);
  const secure = base.protocol === "https:";
  const agent = secure ? new HttpsAgent({ keepAlive: true }) : new Agent({ keepAlive: true });
  const send = secure ? httpsRequest : request;
  const counter = new RequestCounter();

  const server = createServer((req, res) => {
    const path = req.url ?? "/";
    counter.request(path);
    const options: RequestOptions = {
      host: base.hostname,
      port: base.port || (secure ? 443 : 80),
      method: req.method,
      path: `${base.pathname.replace(/\/$/, "")}${path}`,
      headers: { ...forwardable(req), host: base.host },
      agent,
    };
    const upstream = send(options, (response) => {
      counter.answered(path, (response.statusCode ?? 502) < 400);
      res.writeHead(response.statusCode ?? 502, forwardable(response));
      response.pipe(res);
    });
    upstream.on("error", () => res.destroy());
    res.on("close", () => upstream.destroy());
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => counter.body(path, chunks.length > 0 ? Buffer.concat(chunks).toString() : undefined));
    req.pipe(upstream);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    counter,
    close: async () => {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeAllConnections();
      agent.destroy();
      await closed;
    },
  };
}

function forwardable(message: IncomingMessage): Record<string, string | string[]> {
  const headers: Record<string, string | string[]> = {};
  for (const [name, value] of Object.entries(message.headers)) {
    if (value !== undefined && !HOP_HEADERS.has(name)) headers[name] = value;
  }
  return headers;
}
