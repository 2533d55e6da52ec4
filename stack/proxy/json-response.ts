import type { ServerResponse } from "node:http";
import { CORS_RESPONSE_HEADERS } from "./cors";

/** A response whose body is JSON text built by the proxy (integers are written as raw digits). */
export interface JsonResponse {
  readonly status: number;
  /** JSON text. */
  readonly body: string;
  readonly headers?: Readonly<Record<string, string>>;
}

/** `{"error": message}` with the given status. */
export function errorResponse(
  status: number,
  message: string,
  headers: Readonly<Record<string, string>> = {},
): JsonResponse {
  return { status, body: JSON.stringify({ error: message }), headers };
}

/**
 * Writes a JSON response with the headers every response carries: `Content-Type: application/json`, a fresh
 * `upstash-sync-token` and the CORS headers that let a browser page read it. Does nothing when the socket is
 * already gone (a body too large to drain).
 */
export function writeJsonResponse(res: ServerResponse, response: JsonResponse, syncToken: string): void {
  if (res.headersSent || res.destroyed) {
    return;
  }
  const body = Buffer.from(response.body);
  res.writeHead(response.status, {
    ...response.headers,
    ...CORS_RESPONSE_HEADERS,
    "Content-Type": "application/json",
    "Content-Length": String(body.length),
    "upstash-sync-token": syncToken,
  });
  res.end(body);
}
