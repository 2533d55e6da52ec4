import type { IncomingMessage, ServerResponse } from "node:http";
import type { RespConnectionOptions } from "../resp/connection";
import { RespConnectionError } from "../resp/errors";
import { createTokenVerifier } from "./auth";
import { isPreflight, writePreflightResponse } from "./cors";
import type { DedicatedPool } from "./dedicated-pool";
import { HttpError } from "./http-error";
import { errorResponse, type JsonResponse, writeJsonResponse } from "./json-response";
import { parseJsonBody, readBody } from "./request-body";
import { requestedEncoding } from "./response-encoding";
import { findRoute } from "./routes";
import type { ScriptGateway } from "./scripts/script-gateway";
import type { SharedPool } from "./shared-pool";
import type { ProxyStats } from "./stats";
import { decodeSubscription, type SubscriptionStreams, subscriptionPath } from "./subscribe";
import { createSyncTokenSource } from "./sync-token";

/** Upstash accepts these methods; the client only sends POST. */
const ALLOWED_METHODS: ReadonlySet<string> = new Set(["HEAD", "GET", "POST", "PUT"]);

/** What the request handler needs from the server. */
export interface RequestHandlerDeps {
  readonly token: string;
  readonly maxBodyBytes: number;
  readonly shared: SharedPool;
  readonly dedicated: DedicatedPool;
  readonly stats: ProxyStats;
  /** Where Redis is, for the connections that subscription streams open. */
  readonly redis: RespConnectionOptions;
  /** The script-flag mode at work. */
  readonly scripts: ScriptGateway;
  /** Where subscription streams are opened and tracked. */
  readonly streams: SubscriptionStreams;
}

/**
 * Builds the `node:http` request listener. Checks run cheapest first (method, route, token) so a rejected
 * request's body is never read; every outcome, failures included, is a JSON response, except a CORS preflight
 * (204, no body).
 */
export function createRequestHandler(
  deps: RequestHandlerDeps,
): (req: IncomingMessage, res: ServerResponse) => void {
  const verifyToken = createTokenVerifier(deps.token);
  const nextSyncToken = createSyncTokenSource();

  /**
   * The JSON answer to a request, or undefined when a subscription stream took the response over. The checks
   * of a subscription path run in the same order as a command route's: method, path, token, and only then its
   * contents (the channel name, like a body, is decoded after the token passed).
   */
  async function answer(req: IncomingMessage, res: ServerResponse): Promise<JsonResponse | undefined> {
    if (!ALLOWED_METHODS.has(req.method ?? "")) {
      throw new HttpError(405, `ERR method ${req.method} not allowed`, {
        Allow: [...ALLOWED_METHODS].join(", "),
      });
    }
    const url = requestUrl(req);
    const streamPath = subscriptionPath(url.pathname);
    if (streamPath !== undefined) {
      if (!verifyToken(req, url)) {
        throw new HttpError(401, "Unauthorized");
      }
      const subscription = decodeSubscription(streamPath);
      // Upstash bills a SUBSCRIBE like any command; the stream's messages are not counted.
      deps.stats.subscriptions += 1;
      deps.streams.open(req, res, subscription, deps.redis, nextSyncToken());
      return undefined;
    }
    const route = findRoute(url.pathname);
    if (route === undefined) {
      throw new HttpError(404, `ERR endpoint not found: ${url.pathname}`);
    }
    if (!verifyToken(req, url)) {
      throw new HttpError(401, "Unauthorized");
    }
    const body = await readBody(req, deps.maxBodyBytes, (bytes) => {
      deps.stats.requestBytes += bytes;
    });
    return route({
      body: parseJsonBody(body),
      encoding: requestedEncoding(req),
      shared: deps.shared,
      dedicated: deps.dedicated,
      stats: deps.stats,
      scripts: deps.scripts,
    });
  }

  /** Everything a request gets, in order; a subscription stream ends it with undefined. */
  async function handle(req: IncomingMessage, res: ServerResponse): Promise<JsonResponse | undefined> {
    deps.stats.requests += 1;
    if (missingHost(req)) {
      throw new HttpError(400, "ERR missing Host header: HTTP/1.1 requests must carry one");
    }
    if (unmetExpectation(req)) {
      throw new HttpError(417, `ERR unsupported Expect header: ${JSON.stringify(req.headers.expect)}`);
    }
    if (isPreflight(req)) {
      writePreflightResponse(res);
      return undefined;
    }
    return answer(req, res);
  }

  return (req, res) => {
    // Node emits these only to listeners; none of them may become an uncaught exception. A response that
    // fails to be written is cut, and the request's own errors (an aborted upload) are seen by readBody.
    res.on("error", () => res.destroy());
    req.on("error", () => undefined);
    handle(req, res)
      .then(
        (response) => {
          if (response !== undefined) writeJsonResponse(res, response, nextSyncToken());
        },
        (error: unknown) => {
          if (res.headersSent) {
            // A stream that failed after its headers went out cannot turn into a JSON answer.
            res.destroy();
          } else {
            writeJsonResponse(res, failureResponse(error), nextSyncToken());
          }
        },
      )
      .catch(() => res.destroy());
  };
}

/**
 * The request's URL, from the target in origin form (`/pipeline?_token=...`) or absolute form
 * (`http://host/pipeline`, which HTTP/1.1 servers must accept). Prefixing an origin keeps a target like
 * "//pipeline" a path, not a protocol-relative URL.
 *
 * @throws HttpError 400 for anything else Node's parser lets through (`*`, `*]`).
 */
function requestUrl(req: IncomingMessage): URL {
  const target = req.url ?? "/";
  try {
    if (target.startsWith("/")) {
      return new URL(`http://proxy.invalid${target}`);
    }
    if (/^https?:\/\//i.test(target)) {
      const absolute = new URL(target);
      return new URL(`http://proxy.invalid${absolute.pathname}${absolute.search}`);
    }
  } catch {
    // A malformed absolute URL; answered below like any target that is not a path.
  }
  throw new HttpError(400, `ERR malformed request target: ${JSON.stringify(target)}`);
}

/**
 * HTTP/1.1 requires a Host header. The server is created with Node's own check off (it answers with an empty
 * body), so that this one answers with JSON.
 */
function missingHost(req: IncomingMessage): boolean {
  return req.httpVersion === "1.1" && req.headers.host === undefined;
}

/** Node's test for `Expect: 100-continue`, which it answers itself; any other expectation cannot be met. */
const CONTINUE_EXPECTATION = /(?:^|\W)100-continue(?:$|\W)/i;

/**
 * Whether the request expects something other than `100-continue`; Node hands such requests to the
 * `checkExpectation` listener (this handler) instead of answering 417 with an empty body.
 */
function unmetExpectation(req: IncomingMessage): boolean {
  const expect = req.headers.expect;
  return req.httpVersion === "1.1" && expect !== undefined && !CONTINUE_EXPECTATION.test(expect);
}

/** Maps a thrown error to its response; never an empty body. */
function failureResponse(error: unknown): JsonResponse {
  if (error instanceof HttpError) {
    return errorResponse(error.status, error.message, error.headers);
  }
  if (error instanceof RespConnectionError) {
    return errorResponse(500, `ERR Redis is unreachable: ${error.message}`);
  }
  return errorResponse(500, `ERR internal proxy error: ${describe(error)}`);
}

/** The message of anything thrown; `String()` itself throws on an object without a prototype. */
function describe(error: unknown): string {
  try {
    return error instanceof Error ? error.message : String(error);
  } catch {
    return "an unprintable value was thrown";
  }
}
