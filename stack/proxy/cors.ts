import type { IncomingMessage, ServerResponse } from "node:http";

/**
 * CORS, answered the way Upstash answers browsers: any origin may call the REST API, because the bearer token,
 * not the origin, is what authorizes a request. Cookies are never involved, so `*` is allowed.
 */

/** Headers on every response, so a browser lets the page read it (including error bodies). */
export const CORS_RESPONSE_HEADERS: Readonly<Record<string, string>> = {
  "Access-Control-Allow-Origin": "*",
  // The client reads the next read-your-writes token from this header.
  "Access-Control-Expose-Headers": "upstash-sync-token",
};

/**
 * Request headers `@upstash/redis` sends. A header-name wildcard cannot be used: `*` never covers
 * `Authorization`, and `upstash-telemetry-*` is not valid syntax, so each name is listed.
 */
const ALLOWED_REQUEST_HEADERS = [
  "authorization",
  "content-type",
  "accept",
  // Sent by subscribe() on its server-sent-events stream.
  "cache-control",
  "upstash-encoding",
  "upstash-sync-token",
  "upstash-response-format",
  "upstash-telemetry-runtime",
  "upstash-telemetry-platform",
  "upstash-telemetry-sdk",
  "upstash-telemetry-retry",
];

const PREFLIGHT_HEADERS: Readonly<Record<string, string>> = {
  ...CORS_RESPONSE_HEADERS,
  "Access-Control-Allow-Methods": "POST, GET, PUT, HEAD, OPTIONS",
  "Access-Control-Allow-Headers": ALLOWED_REQUEST_HEADERS.join(", "),
  // Browsers cap this (Chromium at 2 h); a day avoids a preflight before most requests.
  "Access-Control-Max-Age": "86400",
};

/**
 * A CORS preflight, as the Fetch standard defines it: `OPTIONS` with `Access-Control-Request-Method`. A bare
 * `OPTIONS` is not one, and keeps its 405.
 */
export function isPreflight(req: IncomingMessage): boolean {
  return req.method === "OPTIONS" && req.headers["access-control-request-method"] !== undefined;
}

/**
 * Answers a preflight with 204 and no body, for any path and without a token: browsers never send credentials
 * on a preflight, and the real request that follows is checked as usual.
 */
export function writePreflightResponse(res: ServerResponse): void {
  res.writeHead(204, { ...PREFLIGHT_HEADERS, "Content-Length": "0" });
  res.end();
}
