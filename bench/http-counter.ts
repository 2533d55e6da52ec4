/**
 * Counts the HTTP requests this process makes with `fetch` (which `@upstash/redis` calls for every
 * command, pipeline and subscription), by route: `/`, `/pipeline`, `/subscribe`, ... Installed in
 * benchmark worker processes, it sees exactly what reaches the proxy from that process, with no
 * extra hop on the wire; the orchestrator cross-checks the totals with the proxy's own counters.
 */

/** Counters of one process, updated in place. */
export interface HttpCounts {
  requests: number;
  /** Request body bytes. */
  bodyBytes: number;
  /** Requests by first path segment, e.g. `{ "/pipeline": 12, "/subscribe": 3 }`. */
  byRoute: Record<string, number>;
  /** Requests answered with a non-2xx status (or that failed), by route. */
  failedByRoute: Record<string, number>;
}

let counts: HttpCounts | undefined;

/** Wraps the global `fetch` once and returns the live counters. */
export function countFetches(): HttpCounts {
  if (counts) return counts;
  const live: HttpCounts = { requests: 0, bodyBytes: 0, byRoute: {}, failedByRoute: {} };
  const original = globalThis.fetch;
  globalThis.fetch = (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
    const url = new URL(typeof input === "string" || input instanceof URL ? input : input.url);
    const route = `/${url.pathname.split("/")[1] ?? ""}`;
    live.requests += 1;
    live.byRoute[route] = (live.byRoute[route] ?? 0) + 1;
    if (typeof init?.body === "string") live.bodyBytes += Buffer.byteLength(init.body);
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
    bodyBytes: of.bodyBytes,
    byRoute: { ...of.byRoute },
    failedByRoute: { ...of.failedByRoute },
  };
}

/** `after − before`. */
export function diffHttp(after: HttpCounts, before: HttpCounts): HttpCounts {
  return {
    requests: after.requests - before.requests,
    bodyBytes: after.bodyBytes - before.bodyBytes,
    byRoute: diffRecord(after.byRoute, before.byRoute),
    failedByRoute: diffRecord(after.failedByRoute, before.failedByRoute),
  };
}

/** Adds `more` into `into`. */
export function addHttp(into: HttpCounts, more: HttpCounts): void {
  into.requests += more.requests;
  into.bodyBytes += more.bodyBytes;
  addRecord(into.byRoute, more.byRoute);
  addRecord(into.failedByRoute, more.failedByRoute);
}

export function emptyHttp(): HttpCounts {
  return { requests: 0, bodyBytes: 0, byRoute: {}, failedByRoute: {} };
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
