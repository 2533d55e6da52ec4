import { randomBytes } from "node:crypto";

/**
 * Returns a generator of `upstash-sync-token` values: a per-server random prefix and a counter, so every
 * response carries a new value. A single redis-server needs no read-your-writes tracking; the header exists
 * because clients (and redis-js's own tests) expect it to change after each request.
 */
export function createSyncTokenSource(): () => string {
  const prefix = randomBytes(6).toString("base64url");
  let counter = 0;
  return () => {
    counter += 1;
    return `${prefix}-${counter}`;
  };
}
