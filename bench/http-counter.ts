/**
 * Counts the HTTP requests this process makes with `fetch` (which `@upstash/redis` calls for every
 * command, pipeline and subscription), by route: `/`, `/pipeline`, `/subscribe`, ..., and the
 * commands Upstash bills for them (see `billing.ts`). Installed in benchmark worker processes, it
 * sees exactly what reaches the proxy from that process, with no extra hop on the wire; the
 * orchestrator cross-checks the totals with the proxy's own counters.
 */
import { billedCommands, routeOf } from "./billing";

/** Counters of one process, updated in place. */
export interface HttpCounts {
  requests: number;
  /** Commands billed: one per command sent, one per subscription. */
  commands: number;
  /** Request body bytes. */
  bodyBytes: number;
  /** Requests by first path segment, e.g. `{ "/pipeline": 12, "/subscribe": 3 }`. */
  byRoute: Record<string, number>;
  /** Requests answered with a non-2xx status (or that failed), by route. */
  failedByRoute: Record<string, number>;
  /** Requests whose commands the billing rules do not cover (counted as 0), by route. */
  uncountedByRoute: Record<string, number>;
}

let counts: HttpCounts | undefined;

/** Wraps the global `fetch` once and returns the live counters. */
export function countFetches(): HttpCounts {
  if (counts) return counts;
  const live = emptyHttp();
  const original = globalThis.fetch;
  globalThis.fetch = (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
    const url = new URL(typeof input === "string" || input instanceof URL ? input : input.url);
    const route = routeOf(url.pathname);
    const body = typeof init?.body === "string" ? init.body : undefined;
    const commands = billedCommands(route, body);
    live.requests += 1;
    live.commands += commands ?? 0;
    live.byRoute[route] = (live.byRoute[route] ?? 0) + 1;
    if (commands === undefined) live.uncountedByRoute[route] = (live.uncountedByRoute[route] ?? 0) + 1;
    if (body !== undefined) live.bodyBytes += Buffer.byteLength(body);
    const failed = () => {
      live.failedByRoute[route] = (live.failedByRoute[route] ?? 0) + 1;
    };
    const response = original(input, init);
    response.then((res) => res.ok || failed(), failed);
    return response;
  };
  counts = live;
  return live;
}

/** A copy of the counters, to subtract later. */
export function snapshotHttp(of: HttpCounts): HttpCounts {
  return {
    requests: of.requests,
    commands: of.commands,
    bodyBytes: of.bodyBytes,
    byRoute: { ...of.byRoute },
    failedByRoute: { ...of.failedByRoute },
    uncountedByRoute: { ...of.uncountedByRoute },
  };
}

/** `after − before`. */
export function diffHttp(after: HttpCounts, before: HttpCounts): HttpCounts {
  return {
    requests: after.requests - before.requests,
    commands: after.commands - before.commands,
    bodyBytes: after.bodyBytes - before.bodyBytes,
    byRoute: diffRecord(after.byRoute, before.byRoute),
    failedByRoute: diffRecord(after.failedByRoute, before.failedByRoute),
    uncountedByRoute: diffRecord(after.uncountedByRoute, before.uncountedByRoute),
  };
}

/** Adds `more` into `into`. */
export function addHttp(into: HttpCounts, more: HttpCounts): void {
  into.requests += more.requests;
  into.commands += more.commands;
  into.bodyBytes += more.bodyBytes;
  addRecord(into.byRoute, more.byRoute);
  addRecord(into.failedByRoute, more.failedByRoute);
  addRecord(into.uncountedByRoute, more.uncountedByRoute);
}

export function emptyHttp(): HttpCounts {
  return { requests: 0, commands: 0, bodyBytes: 0, byRoute: {}, failedByRoute: {}, uncountedByRoute: {} };
}

export function diffRecord(after: Record<string, number>, before: Record<string, number>) {
  const result: Record<string, number> = {};
  for (const [key, value] of Object.entries(after)) {
    const delta = value - (before[key] ?? 0);
    if (delta !== 0) result[key] = delta;
  }
  return result;
}

export function addRecord(into: Record<string, number>, more: Record<string, number>): void {
  for (const [key, value] of Object.entries(more)) into[key] = (into[key] ?? 0) + value;
}
