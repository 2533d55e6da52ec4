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
import { requestedSubscription, streamSubscription } from "./subscribe";
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

  /** @param subscription whether the path is a subscription, which failed its method or token check. */
  async function answer(req: IncomingMessage, subscription: boolean): Promise<JsonResponse> {
    if (!ALLOWED_METHODS.has(req.method ?? "")) {
      throw new HttpError(405, `ERR method ${req.method} not allowed`, {
        Allow: [...ALLOWED_METHODS].join(", "),
      });
    }
    const url = requestUrl(req);
    if (subscription) {
      throw new HttpError(401, "Unauthorized");
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

  return (req, res) => {
    deps.stats.requests += 1;
    if (isPreflight(req)) {
      writePreflightResponse(res);
      return;
    }
    // Subscriptions stream events instead of answering with JSON, once method and token pass.
    const subscription = requestedSubscription(requestUrl(req).pathname);
    if (
      subscription !== undefined &&
      ALLOWED_METHODS.has(req.method ?? "") &&
      verifyToken(req, requestUrl(req))
    ) {
      // Upstash bills a SUBSCRIBE like any command; the stream's messages are not counted.
      deps.stats.subscriptions += 1;
      streamSubscription(req, res, subscription, deps.redis);
      return;
    }
    answer(req, subscription !== undefined).then(
      (response) => writeJsonResponse(res, response, nextSyncToken()),
      (error: unknown) => writeJsonResponse(res, failureResponse(error), nextSyncToken()),
    );
  };
}

/** The request's URL; prefixing an origin keeps a target like "//pipeline" a path, not a protocol-relative URL. */
function requestUrl(req: IncomingMessage): URL {
  return new URL(`http://proxy.invalid${req.url ?? "/"}`);
}

/** Maps a thrown error to its response; never an empty body. */
function failureResponse(error: unknown): JsonResponse {
  if (error instanceof HttpError) {
    return errorResponse(error.status, error.message, error.headers);
  }
  if (error instanceof RespConnectionError) {
    return errorResponse(500, `ERR Redis is unreachable: ${error.message}`);
  }
  return errorResponse(
    500,
    `ERR internal proxy error: ${error instanceof Error ? error.message : String(error)}`,
  );
}
