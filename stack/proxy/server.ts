import {
  createServer,
  type IncomingMessage,
  type Server,
  type ServerResponse,
  STATUS_CODES,
} from "node:http";
import type { AddressInfo } from "node:net";
import type { Duplex } from "node:stream";
import { connectionOptionsFromUrl } from "../resp/redis-url";
import { generateToken } from "./auth";
import { CORS_RESPONSE_HEADERS } from "./cors";
import { DedicatedPool } from "./dedicated-pool";
import { createRequestHandler } from "./request-handler";
import { CommandCatalog } from "./scripts/command-catalog";
import { KeyLockingEmulation } from "./scripts/key-locking-emulation";
import {
  forwardScripts,
  SCRIPT_FLAGS_MODES,
  type ScriptFlagsMode,
  type ScriptGateway,
} from "./scripts/script-gateway";
import { SharedPool } from "./shared-pool";
import { createStats, type ProxyStats } from "./stats";
import { SubscriptionStreams } from "./subscribe";

/** Options of {@link startProxy}. */
export interface ProxyOptions {
  /** The Redis to front, e.g. `redis://127.0.0.1:7001` (user, password and db number are honoured). */
  readonly redisUrl: string;
  /**
   * Interface to listen on.
   * @default "127.0.0.1"
   */
  readonly host?: string;
  /**
   * Port to listen on; 0 picks a free one.
   * @default 0
   */
  readonly port?: number;
  /**
   * Bearer token clients must present.
   * @default a random 32-character base64url token
   */
  readonly token?: string;
  /**
   * Largest accepted request body, in bytes; larger ones get 413 `ERR max request size exceeded`.
   * @default 1000000 (Upstash's "1 MB" on Free and pay-as-you-go, read as the smaller of 10^6 and 2^20
   *   bytes: a body accepted here is accepted there)
   */
  readonly maxBodyBytes?: number;
  /**
   * Shared connections used by `/` and `/pipeline`.
   * @default 4
   */
  readonly poolSize?: number;
  /**
   * Time allowed to connect to Redis, in milliseconds.
   * @default 5000
   */
  readonly connectTimeoutMs?: number;
  /**
   * What to do with Upstash's `#!lua flags=allow-key-locking`, which Redis rejects: `"emulate"` takes the
   * flag out before Redis sees the script, keeps EVALSHA working by the SHA-1 of the text the client sent,
   * and refuses undeclared keys and database-wide commands in the script, as Upstash does; `"accept"` does
   * the same without the key check, whose Lua guard slows every flagged script (benchmarks); `"forward"`
   * passes scripts through untouched, as serverless-redis-http does, so Redis answers
   * `ERR Unexpected flag in script shebang: allow-key-locking`. See `stack/README.md`.
   * @default "emulate"
   */
  readonly scriptFlags?: ScriptFlagsMode;
}

/** A running proxy. */
export interface ProxyHandle {
  /** Base URL for `UPSTASH_REDIS_REST_URL`, e.g. `http://127.0.0.1:40123`. */
  readonly url: string;
  readonly host: string;
  readonly port: number;
  /** Token for `UPSTASH_REDIS_REST_TOKEN`. */
  readonly token: string;
  /** Live counters (requests, request bytes, commands, subscriptions), updated in place. */
  readonly stats: Readonly<ProxyStats>;
  /** Subscription streams (`/subscribe/...`, `/psubscribe/...`) open right now. */
  openSubscriptions(): number;
  /**
   * Ends every open subscription stream quietly, as a server finishing the response would: its Redis
   * subscriber connection is closed and the response ends normally (`res.end()`), so the client's reader
   * sees the end of the body, without an error.
   *
   * @returns how many streams were ended.
   */
  endSubscriptions(): number;
  /**
   * Breaks every open subscription stream, as a network failure would: its socket is destroyed
   * mid-response (the client's reader fails) and its Redis subscriber connection is closed.
   *
   * @returns how many streams were dropped.
   */
  dropSubscriptions(): number;
  /** Stops listening, lets in-flight requests finish briefly, then closes every socket. */
  close(): Promise<void>;
}

/** How long `close()` waits for in-flight requests before cutting their sockets. */
const CLOSE_GRACE_MS = 1000;
/** Transactions are short; a few warm connections cover bursts without reconnect cost. */
const MAX_IDLE_TRANSACTION_CONNECTIONS = 8;

/**
 * Starts an HTTP server that speaks the Upstash REST protocol (`/`, `/pipeline`, `/multi-exec`, and the
 * `/subscribe/<channel>` and `/psubscribe/<pattern>` event streams) in front of a redis-server. Connections to
 * Redis open lazily, so the proxy starts even when Redis is down and answers 500 until it is back.
 *
 * @throws RangeError for a non-positive `maxBodyBytes` or `poolSize`.
 * @throws TypeError for an empty `token`, a `redisUrl` that is not `redis://`, or an unknown `scriptFlags`.
 */
export async function startProxy(options: ProxyOptions): Promise<ProxyHandle> {
  const maxBodyBytes = positiveInteger("maxBodyBytes", options.maxBodyBytes ?? 1_000_000);
  const poolSize = positiveInteger("poolSize", options.poolSize ?? 4);
  const token = options.token ?? generateToken();
  if (token === "") {
    throw new TypeError("Expected `token` to be a non-empty string");
  }
  const scriptFlags = options.scriptFlags ?? "emulate";
  if (!SCRIPT_FLAGS_MODES.includes(scriptFlags)) {
    throw new TypeError(
      `Expected \`scriptFlags\` to be "emulate", "accept" or "forward", got ${JSON.stringify(scriptFlags)}`,
    );
  }
  const redis = {
    ...connectionOptionsFromUrl(options.redisUrl),
    ...(options.connectTimeoutMs === undefined ? {} : { connectTimeoutMs: options.connectTimeoutMs }),
  };
  const shared = new SharedPool(redis, poolSize);
  const dedicated = new DedicatedPool(redis, MAX_IDLE_TRANSACTION_CONNECTIONS);
  const stats = createStats();
  const scripts = scriptGateway(scriptFlags, shared);
  const streams = new SubscriptionStreams();
  const handler = createRequestHandler({
    token,
    maxBodyBytes,
    shared,
    dedicated,
    stats,
    redis,
    scripts,
    streams,
  });
  // Node's own answers to a request without Host, to an unmet Expect and to CONNECT are empty bodies or a
  // silently closed socket; the handlers here answer them with JSON like everything else.
  const server = createServer({ requireHostHeader: false }, handler);
  server.on("checkExpectation", handler);
  server.on("connect", (_req: IncomingMessage, socket: Duplex) => {
    stats.requests += 1;
    answerRaw(socket, 405, "ERR method CONNECT not allowed", { Allow: "HEAD, GET, POST, PUT" });
  });
  server.on("clientError", answerClientError);
  const host = options.host ?? "127.0.0.1";
  try {
    await listen(server, options.port ?? 0, host);
  } catch (error) {
    shared.close();
    dedicated.close();
    throw error;
  }
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://${urlHost(host)}:${port}`,
    host,
    port,
    token,
    stats,
    openSubscriptions: () => streams.count,
    endSubscriptions: () => streams.endAll(),
    dropSubscriptions: () => streams.dropAll(),
    async close() {
      await closeServer(server);
      shared.close();
      dedicated.close();
    },
  };
}

/** The emulation asks Redis for the key positions of commands over the shared connections, like any request. */
function scriptGateway(mode: ScriptFlagsMode, shared: SharedPool): ScriptGateway {
  if (mode === "forward") {
    return forwardScripts;
  }
  const catalog = new CommandCatalog((command) => shared.pick().call(...command));
  return new KeyLockingEmulation(catalog, { checkKeys: mode === "emulate" });
}

function positiveInteger(name: string, value: number): number {
  if (!Number.isSafeInteger(value) || value <= 0) {
    throw new RangeError(`Expected \`${name}\` to be a positive integer, got ${value}`);
  }
  return value;
}

function listen(server: Server, port: number, host: string): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, () => {
      server.off("error", reject);
      resolve();
    });
  });
}

/** A wildcard listen address is reached through loopback; IPv6 literals need brackets in a URL. */
function urlHost(host: string): string {
  if (host === "0.0.0.0" || host === "::" || host === "") {
    return "127.0.0.1";
  }
  return host.includes(":") ? `[${host}]` : host;
}

async function closeServer(server: Server): Promise<void> {
  const closed = new Promise<void>((resolve) => server.close(() => resolve()));
  server.closeIdleConnections();
  const grace = setTimeout(() => server.closeAllConnections(), CLOSE_GRACE_MS);
  await closed;
  clearTimeout(grace);
}

/** Status and message of a request Node's parser rejected, by error code (anything else is a 400). */
const CLIENT_ERRORS: Readonly<Record<string, readonly [number, string]>> = {
  HPE_HEADER_OVERFLOW: [431, "ERR malformed HTTP request"],
  HPE_CHUNK_EXTENSIONS_OVERFLOW: [413, "ERR malformed HTTP request"],
  ERR_HTTP_REQUEST_TIMEOUT: [408, "ERR request timed out"],
};

/**
 * Node's default answer to a malformed request has no body; every response here is JSON. As in Node's own
 * handler, nothing is written once a response on this socket has started (it would corrupt it).
 */
function answerClientError(error: NodeJS.ErrnoException, socket: Duplex): void {
  const inFlight = (socket as { _httpMessage?: ServerResponse | null })._httpMessage;
  if (error.code === "ECONNRESET" || !socket.writable || inFlight?.headersSent) {
    socket.destroy();
    return;
  }
  const [status, prefix] = CLIENT_ERRORS[error.code ?? ""] ?? [400, "ERR malformed HTTP request"];
  answerRaw(socket, status, `${prefix}: ${error.message}`);
}

/** Writes a JSON error answer straight to a socket that has no `ServerResponse`, and closes it. */
function answerRaw(
  socket: Duplex,
  status: number,
  message: string,
  headers: Readonly<Record<string, string>> = {},
): void {
  const body = JSON.stringify({ error: message });
  const head = Object.entries({
    ...headers,
    ...CORS_RESPONSE_HEADERS,
    "Content-Type": "application/json",
    "Content-Length": String(Buffer.byteLength(body)),
    Connection: "close",
  }).map(([name, value]) => `${name}: ${value}\r\n`);
  socket.on("error", () => socket.destroy());
  socket.end(`HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\n${head.join("")}\r\n${body}`);
}
