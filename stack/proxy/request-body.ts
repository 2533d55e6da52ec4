import type { IncomingMessage } from "node:http";
import { HttpError } from "./http-error";

/**
 * How much of an oversized body is still read and thrown away before the socket is cut. Reading it lets the
 * client finish sending and see the 413; cutting the socket mid-upload makes `fetch` throw instead.
 */
const DRAIN_LIMIT_BYTES = 64 * 1024 * 1024;

/**
 * Reads the whole request body, at most `maxBytes` of it.
 *
 * @param onBytes Called with the size of every chunk read, for the request-byte counter.
 * @throws HttpError 413 `ERR max request size exceeded` once the oversized body has been drained.
 */
export function readBody(
  req: IncomingMessage,
  maxBytes: number,
  onBytes: (bytes: number) => void,
): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on("data", (chunk: Buffer) => {
      size += chunk.length;
      onBytes(chunk.length);
      if (size <= maxBytes) {
        chunks.push(chunk);
      } else if (size > maxBytes + DRAIN_LIMIT_BYTES) {
        req.destroy();
      }
    });
    req.on("end", () => {
      if (size > maxBytes) {
        reject(new HttpError(413, "ERR max request size exceeded"));
      } else {
        resolve(Buffer.concat(chunks, size));
      }
    });
    req.on("error", reject);
    req.on("close", () => {
      if (!req.complete) {
        reject(new HttpError(400, "ERR request body was not received completely"));
      }
    });
  });
}

/**
 * Parses the body as JSON. The Content-Type is not checked: clients send `application/json`, with or without
 * a charset, or nothing.
 *
 * @throws HttpError 400 for an empty or invalid body.
 */
export function parseJsonBody(body: Buffer): unknown {
  const text = body.toString("utf8");
  if (text.trim() === "") {
    throw new HttpError(400, 'ERR empty request body: expected a JSON command array like ["PING"]');
  }
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new HttpError(400, `ERR invalid JSON body: ${(error as Error).message}`);
  }
}
