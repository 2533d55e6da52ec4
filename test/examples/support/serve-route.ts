import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";

/** A Web-standard handler, as a route file exports it. */
export type RouteHandler = (request: Request) => Promise<Response>;

/** A running server and its base URL. */
export interface ServedRoute {
  readonly url: string;
  close(): Promise<void>;
}

/**
 * Serves `handler` over real HTTP on 127.0.0.1, turning each Node request into a `Request` and the handler's
 * `Response` back, the way a framework's adapter does; an error thrown by the handler becomes a 500.
 */
export async function serveRoute(handler: RouteHandler): Promise<ServedRoute> {
  const server: Server = createServer((req, res) => {
    toRequest(req)
      .then(handler)
      .catch((error: unknown) => new Response(String(error), { status: 500 }))
      .then(async (response) => {
        response.headers.forEach((value, name) => {
          res.setHeader(name, value);
        });
        res.writeHead(response.status);
        res.end(Buffer.from(await response.arrayBuffer()));
      });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

async function toRequest(req: IncomingMessage): Promise<Request> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const headers = new Headers();
  for (const [name, value] of Object.entries(req.headers)) {
    if (typeof value === "string") headers.set(name, value);
  }
  const hasBody = req.method !== "GET" && req.method !== "HEAD";
  return new Request(`http://${req.headers.host ?? "localhost"}${req.url ?? "/"}`, {
    method: req.method ?? "GET",
    headers,
    ...(hasBody ? { body: Buffer.concat(chunks) } : {}),
  });
}
