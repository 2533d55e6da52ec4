import { handleMultiExec } from "./handlers/multi-exec";
import { handlePipeline } from "./handlers/pipeline";
import { handleSingle } from "./handlers/single";
import type { JsonResponse } from "./json-response";
import type { RouteContext } from "./route-context";

/** Handles one request whose body has been read and parsed, and answers with JSON. */
export type RouteHandler = (context: RouteContext) => Promise<JsonResponse>;

/**
 * The command routes, by exact path. `""` (a base URL without path) arrives as `/`.
 *
 * The streaming routes `POST /subscribe/<channel>` and `POST /psubscribe/<pattern>` (SSE) are a different
 * kind, matched by prefix in the request handler before this table: see `subscribe.ts`.
 */
const ROUTES: ReadonlyMap<string, RouteHandler> = new Map([
  ["/", handleSingle],
  ["/pipeline", handlePipeline],
  ["/multi-exec", handleMultiExec],
]);

/** The handler for a path (one trailing slash tolerated), or undefined for a 404. */
export function findRoute(pathname: string): RouteHandler | undefined {
  const normalized = pathname.length > 1 && pathname.endsWith("/") ? pathname.slice(0, -1) : pathname;
  return ROUTES.get(normalized);
}
