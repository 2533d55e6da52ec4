import { Agent, createServer, type IncomingMessage, type RequestOptions, request } from "node:http";
import { Agent as HttpsAgent, request as httpsRequest } from "node:https";
import type { AddressInfo } from "node:net";
import { billedCommands, routeOf } from "./billing";

/** What crossed a {@link CountingPassThrough}. */
export interface WireCounts {
  requests: number;
  /** Commands billed (see `billing.ts`): counted once each request's body has arrived. */
  commands: number;
  /** Request body bytes, what the proxy counts as request bytes. */
  bodyBytes: number;
  /** Request line and headers, as the client sent them. */
  headerBytes: number;
  /** Requests by first path segment: `/`, `/pipeline`, `/subscribe`, ... */
  byRoute: Record<string, number>;
  /** Requests whose commands the billing rules do not cover (counted as 0), by route. */
  uncountedByRoute: Record<string, number>;
  /** Responses whose status line came back from the target: requests the server has answered. */
  responses: number;
  /** The body of the last request, to show where the bytes go. */
  lastBody: string;
}

/** A running pass-through. */
export interface CountingPassThrough {
  /** Give this to the client instead of the target URL. */
  readonly url: string;
  readonly counts: Readonly<WireCounts>;
  /** Resolves once the target has answered `count` requests in all (see `WireCounts.responses`). */
  answered(count: number): Promise<void>;
  close(): Promise<void>;
}

const HOP_HEADERS = new Set(["connection", "keep-alive", "host", "proxy-connection", "te", "upgrade"]);

/**
 * An HTTP pass-through on 127.0.0.1 that counts requests and their bytes on the way to `target`
 * (the local proxy or a remote Upstash endpoint). Bodies stream in both directions, so server-sent
 * event streams (subscriptions) pass through live.
 */
export async function startCountingPassThrough(target: string): Promise<CountingPassThrough> {
  const base = new URL(target);
  const secure = base.protocol === "https:";
  const agent = secure ? new HttpsAgent({ keepAlive: true }) : new Agent({ keepAlive: true });
  const send = secure ? httpsRequest : request;
  const counts: WireCounts = {
    requests: 0,
    commands: 0,
    bodyBytes: 0,
    headerBytes: 0,
    byRoute: {},
    uncountedByRoute: {},
    responses: 0,
    lastBody: "",
  };
  const waiters = new Set<{ count: number; resolve: () => void }>();

  const server = createServer((req, res) => {
    const path = req.url ?? "/";
    const route = routeOf(path);
    counts.requests += 1;
    counts.byRoute[route] = (counts.byRoute[route] ?? 0) + 1;
    counts.headerBytes += headerBytes(req);
    const options: RequestOptions = {
      host: base.hostname,
      port: base.port || (secure ? 443 : 80),
      method: req.method,
      path: `${base.pathname.replace(/\/$/, "")}${path}`,
      headers: { ...forwardable(req), host: base.host },
      agent,
    };
    const upstream = send(options, (response) => {
      counts.responses += 1;
      for (const waiter of waiters) {
        if (counts.responses < waiter.count) continue;
        waiters.delete(waiter);
        waiter.resolve();
      }
      res.writeHead(response.statusCode ?? 502, forwardable(response));
      response.pipe(res);
    });
    upstream.on("error", () => res.destroy());
    res.on("close", () => upstream.destroy());
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => {
      counts.bodyBytes += chunk.length;
      chunks.push(chunk);
    });
    req.on("end", () => {
      counts.lastBody = Buffer.concat(chunks).toString();
      const commands = billedCommands(route, counts.lastBody);
      counts.commands += commands ?? 0;
      if (commands === undefined) counts.uncountedByRoute[route] = (counts.uncountedByRoute[route] ?? 0) + 1;
    });
    req.pipe(upstream);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    counts,
    answered: (count) =>
      counts.responses >= count
        ? Promise.resolve()
        : new Promise<void>((resolve) => waiters.add({ count, resolve })),
    close: async () => {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeAllConnections();
      agent.destroy();
      await closed;
    },
  };
}

/** `METHOD path HTTP/1.1\r\n`, each `Name: value\r\n`, and the blank line. */
function headerBytes(req: IncomingMessage): number {
  let total = Buffer.byteLength(`${req.method} ${req.url} HTTP/${req.httpVersion}\r\n`) + 2;
  for (let index = 0; index < req.rawHeaders.length; index += 2) {
    total += Buffer.byteLength(`${req.rawHeaders[index]}: ${req.rawHeaders[index + 1]}\r\n`);
  }
  return total;
}

function forwardable(message: IncomingMessage): Record<string, string | string[]> {
  const headers: Record<string, string | string[]> = {};
  for (const [name, value] of Object.entries(message.headers)) {
    if (value !== undefined && !HOP_HEADERS.has(name)) headers[name] = value;
  }
  return headers;
}

export function snapshotWire(counts: WireCounts): WireCounts {
  return { ...counts, byRoute: { ...counts.byRoute }, uncountedByRoute: { ...counts.uncountedByRoute } };
}

/** What crossed `passThrough` while `operation` ran (the last body is the last one seen by then). */
export async function countedDuring(
  passThrough: CountingPassThrough,
  operation: () => Promise<unknown>,
): Promise<WireCounts> {
  const before = snapshotWire(passThrough.counts);
  await operation();
  return wireSince(passThrough, before);
}

/** What crossed `passThrough` since `before` was taken. */
export function wireSince(passThrough: CountingPassThrough, before: WireCounts): WireCounts {
  const after = passThrough.counts;
  return {
    requests: after.requests - before.requests,
    commands: after.commands - before.commands,
    bodyBytes: after.bodyBytes - before.bodyBytes,
    headerBytes: after.headerBytes - before.headerBytes,
    byRoute: positiveDelta(after.byRoute, before.byRoute),
    uncountedByRoute: positiveDelta(after.uncountedByRoute, before.uncountedByRoute),
    responses: after.responses - before.responses,
    lastBody: after.lastBody,
  };
}

function positiveDelta(after: Record<string, number>, before: Record<string, number>) {
  return Object.fromEntries(
    Object.entries(after)
      .map(([route, count]) => [route, count - (before[route] ?? 0)] as const)
      .filter(([, count]) => count > 0),
  );
}
