import type { IncomingMessage } from "node:http";

/** How strings in replies are written: `base64` when the client sent `Upstash-Encoding: base64`. */
export type ResponseEncoding = "base64" | "plain";

/** Reads the `Upstash-Encoding` request header; any of its comma-separated values may be `base64`. */
export function requestedEncoding(req: IncomingMessage): ResponseEncoding {
  const header = req.headers["upstash-encoding"];
  const values = (Array.isArray(header) ? header : [header ?? ""]).flatMap((value) => value.split(","));
  return values.some((value) => value.trim().toLowerCase() === "base64") ? "base64" : "plain";
}
