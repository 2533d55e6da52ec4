import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

/** What a recording pass-through keeps of a request, to re-send it later. */
export interface Recorded {
  readonly path: string;
  readonly headers: Record<string, string>;
  readonly body: string;
}

const CONNECTION_HEADERS = ["host", "connection", "content-length", "keep-alive"];

/** A request's headers to forward: those of its own connection left out. */
export function forwardedHeaders(req: IncomingMessage): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(req.headers))
    if (typeof value === "string" && !CONNECTION_HEADERS.includes(name)) headers[name] = value;
  return headers;
}

/**
 * A pass-through on a free port of 127.0.0.1 for the randomized schedules, which record each request the
 * way they need: `listen` hands every request to the subclass, `forward` sends one on to the target, and
 * `replay` re-sends a recorded one straight to it (a client's re-sent copy landing late). Every request is
 * bounded by `requestMs`.
 */
export class RecordingServer {
  server: Server | undefined;
  url = "";
  constructor(
    readonly target: string,
    readonly requestMs = 10_000,
  ) {}

  async listen(handle: (req: IncomingMessage, res: ServerResponse) => void): Promise<void> {
    const server = createServer(handle);
    this.server = server;
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    this.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  }

  forward(entry: Recorded, method = "POST"): Promise<Response> {
    const { path, headers, body } = entry;
    return fetch(this.target + path, { method, headers, body, signal: AbortSignal.timeout(this.requestMs) });
  }

  async replay(entry: Recorded): Promise<string> {
    return (await this.forward(entry)).text();
  }

  async close(): Promise<void> {
    const server = this.server;
    if (!server) return;
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
}
