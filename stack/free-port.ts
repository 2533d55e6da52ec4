import { createServer } from "node:net";

/** The default Redis port: another Redis may own it on this machine, so it is never handed out. */
const RESERVED_PORT = 6379;

/**
 * Asks the OS for a free TCP port on `host` (listen on port 0, read it, close). Another process could take
 * the port before it is used again; callers that spawn servers must detect that and retry.
 */
export async function findFreePort(host = "127.0.0.1"): Promise<number> {
  for (;;) {
    const port = await listenOnce(host);
    if (port !== RESERVED_PORT) {
      return port;
    }
  }
}

function listenOnce(host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.once("error", reject);
    server.listen(0, host, () => {
      const address = server.address();
      const port = typeof address === "object" && address !== null ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}
