import type { DedicatedPool } from "./dedicated-pool";
import type { ResponseEncoding } from "./response-encoding";
import type { ScriptGateway } from "./scripts/script-gateway";
import type { SharedPool } from "./shared-pool";
import type { ProxyStats } from "./stats";

/** What a route handler gets: the parsed body and the ways to reach Redis. */
export interface RouteContext {
  /** The request body, parsed as JSON but not yet validated. */
  readonly body: unknown;
  readonly encoding: ResponseEncoding;
  readonly shared: SharedPool;
  readonly dedicated: DedicatedPool;
  readonly stats: ProxyStats;
  /** Rewrites script commands for the script-flag mode (EVAL of a flagged script, EVALSHA...). */
  readonly scripts: ScriptGateway;
}
