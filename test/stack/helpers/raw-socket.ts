import { connect } from "node:net";

/** What came back on a raw socket. */
export type RawSocketOutcome =
  | {
      readonly kind: "answered";
      readonly status: number;
      /** Header names in lowercase; repeated headers joined with ", ". */
      readonly headers: Readonly<Record<string, string>>;
      /** The body (de-chunked); empty for HEAD, 204 and 304, and for an event stream, which is cut at its headers. */
      readonly body: string;
    }
  /** The server closed the socket without a complete answer. */
  | { readonly kind: "closed"; readonly received: string }
  /** Nothing complete arrived in time (the socket is destroyed). */
  | { readonly kind: "timeout"; readonly received: string };

/** Options of {@link rawExchange}. */
export interface RawExchangeOptions {
  /** The request's method, so that a HEAD answer is known to have no body. */
  readonly method?: string;
  /** Gives up after this long. @default 5000 */
  readonly timeoutMs?: number;
  /** Pause between two written pieces, in milliseconds. @default 0 */
  readonly pauseMs?: number;
  /** Destroys the socket once every piece is written, without waiting for an answer. */
  readonly abortAfterWrite?: boolean;
}

/**
 * Writes `pieces` to a fresh TCP connection, one after another, and reads one HTTP/1.1 answer. The socket is
 * always destroyed before the promise settles, so nothing is left open.
 */
export function rawExchange(
  port: number,
  pieces: readonly (string | Buffer)[],
  options: RawExchangeOptions = {},
): Promise<RawSocketOutcome> {
  const timeoutMs = options.timeoutMs ?? 5000;
  return new Promise((resolve) => {
    const socket = connect(port, "127.0.0.1");
    let received = Buffer.alloc(0);
    let settled = false;
    const settle = (outcome: RawSocketOutcome) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      socket.destroy();
      resolve(outcome);
    };
    const timer = setTimeout(
      () => settle({ kind: "timeout", received: received.toString("latin1") }),
      timeoutMs,
    );
    socket.on("error", () => settle(parsed(received, options.method, true)));
    socket.on("close", () => settle(parsed(received, options.method, true)));
    socket.on("data", (chunk: Buffer) => {
      received = Buffer.concat([received, chunk]);
      const outcome = parsed(received, options.method, false);
      if (outcome.kind === "answered") settle(outcome);
    });
    socket.once("connect", async () => {
      for (const [index, piece] of pieces.entries()) {
        if (settled || socket.destroyed) return;
        if (index > 0 && (options.pauseMs ?? 0) > 0) {
          await new Promise((wake) => setTimeout(wake, options.pauseMs));
        }
        if (settled || socket.destroyed) return;
        socket.write(piece);
      }
      if (options.abortAfterWrite) {
        settle({ kind: "closed", received: received.toString("latin1") });
      }
    });
  });
}

/** The answer in `bytes` if it is complete (or `ended`, for a body that runs to the close). */
function parsed(bytes: Buffer, method: string | undefined, ended: boolean): RawSocketOutcome {
  const text = bytes.toString("latin1");
  const headEnd = text.indexOf("\r\n\r\n");
  const incomplete: RawSocketOutcome = { kind: "closed", received: text };
  if (headEnd === -1) return incomplete;
  const [statusLine = "", ...headerLines] = text.slice(0, headEnd).split("\r\n");
  const match = /^HTTP\/1\.[01] (\d{3})/.exec(statusLine);
  if (!match) return incomplete;
  const status = Number(match[1]);
  const headers: Record<string, string> = {};
  for (const line of headerLines) {
    const colon = line.indexOf(":");
    if (colon <= 0) continue;
    const name = line.slice(0, colon).trim().toLowerCase();
    const value = line.slice(colon + 1).trim();
    headers[name] = headers[name] === undefined ? value : `${headers[name]}, ${value}`;
  }
  // 1xx answers (100 Continue) precede the real one.
  if (status >= 100 && status < 200) {
    return parsed(bytes.subarray(headEnd + 4), method, ended);
  }
  const rest = bytes.subarray(headEnd + 4);
  const answered = (body: Buffer): RawSocketOutcome => ({
    kind: "answered",
    status,
    headers,
    body: body.toString("utf8"),
  });
  if (method === "HEAD" || status === 204 || status === 304) return answered(Buffer.alloc(0));
  if ((headers["content-type"] ?? "").startsWith("text/event-stream")) return answered(Buffer.alloc(0));
  const length = headers["content-length"];
  if (length !== undefined) {
    return rest.length >= Number(length) ? answered(rest.subarray(0, Number(length))) : incomplete;
  }
  if (/chunked/i.test(headers["transfer-encoding"] ?? "")) {
    const body = dechunked(rest);
    return body === undefined ? incomplete : answered(body);
  }
  return ended ? answered(rest) : incomplete;
}

/** The de-chunked body, or undefined while the last chunk has not arrived. */
function dechunked(bytes: Buffer): Buffer | undefined {
  const parts: Buffer[] = [];
  let offset = 0;
  for (;;) {
    const lineEnd = bytes.indexOf("\r\n", offset, "latin1");
    if (lineEnd === -1) return undefined;
    const size = Number.parseInt(bytes.subarray(offset, lineEnd).toString("latin1"), 16);
    if (!Number.isFinite(size)) return undefined;
    if (size === 0) return Buffer.concat(parts);
    const start = lineEnd + 2;
    if (bytes.length < start + size + 2) return undefined;
    parts.push(bytes.subarray(start, start + size));
    offset = start + size + 2;
  }
}

/** A complete HTTP/1.1 request with `Connection: close` and a Content-Length for the body, when there is one. */
export function httpRequest(
  method: string,
  target: string,
  headers: Readonly<Record<string, string>> = {},
  body?: string,
): string {
  const lines = [`${method} ${target} HTTP/1.1`, "Host: 127.0.0.1", "Connection: close"];
  for (const [name, value] of Object.entries(headers)) lines.push(`${name}: ${value}`);
  if (body !== undefined) lines.push(`Content-Length: ${Buffer.byteLength(body)}`);
  return `${lines.join("\r\n")}\r\n\r\n${body ?? ""}`;
}
