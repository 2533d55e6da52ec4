import type { ProxyStats } from "../../stack/proxy/stats";

/**
 * The one way tests and the benchmark count what a client sends: requests, the commands Upstash
 * bills for them, and their bytes. A counter is fed wherever requests can be seen: the tests'
 * fault-injecting pass-through, the benchmark's counting pass-through and its `fetch` and ioredis
 * taps. The local proxy counts for itself ({@link ProxyStats}); {@link billedAtProxy} reads those
 * counters the same way, so the two can be checked against each other.
 *
 * Billing: every command is billed: a single command on `/`, each command of a `/pipeline` or
 * `/multi-exec` body, each subscription (a request to `/subscribe/<channel>` or
 * `/psubscribe/<pattern>` opens one server-sent-events stream: one SUBSCRIBE; closing it sends
 * nothing); over TCP, each command.
 */

/** What a counter saw. */
export interface RequestCounts {
  /** Requests seen, refused and failed ones included; over TCP, commands sent (each a round trip). */
  requests: number;
  /** Commands billed for them; a request outside the billing rules counts 0 (see `uncountedByRoute`). */
  commands: number;
  /** Request body bytes. */
  requestBytes: number;
  /** Requests by path: `/`, `/pipeline`, `/subscribe/<channel>`, ...; over TCP, by command name. */
  byPath: Record<string, number>;
  /** Requests answered, whatever the answer. */
  responses: number;
  /** Requests answered with an error status, or not at all, by route (see {@link routeOf}). */
  failedByRoute: Record<string, number>;
  /** Requests the billing rules do not cover (another route, a batch body that is no JSON array), by route. */
  uncountedByRoute: Record<string, number>;
}

export function emptyCounts(): RequestCounts {
  return {
    requests: 0,
    commands: 0,
    requestBytes: 0,
    byPath: {},
    responses: 0,
    failedByRoute: {},
    uncountedByRoute: {},
  };
}

/** Counts requests as they are seen; `counts` is live. */
export class RequestCounter {
  readonly counts: RequestCounts = emptyCounts();
  /** The body of the last request seen, to show where its bytes go. */
  lastBody = "";
  readonly #waiters = new Set<{ readonly count: number; readonly resolve: () => void }>();

  /** An HTTP request to `path`, as it arrives (its body may follow with {@link body}). */
  request(path: string): void {
    this.counts.requests += 1;
    bump(this.counts.byPath, pathOf(path));
  }

  /** The whole body of a request to `path` (`undefined`: none): its bytes, and the commands billed for it. */
  body(path: string, body: string | undefined): void {
    const route = routeOf(path);
    const commands = billedCommands(route, body);
    this.counts.requestBytes += body === undefined ? 0 : Buffer.byteLength(body);
    this.counts.commands += commands ?? 0;
    if (commands === undefined) bump(this.counts.uncountedByRoute, route);
    if (body !== undefined) this.lastBody = body;
  }

  /** A command sent over TCP: one request, one command. */
  command(name: string): void {
    this.counts.requests += 1;
    this.counts.commands += 1;
    bump(this.counts.byPath, name.toLowerCase());
  }

  /** The answer to a request to `path`: `ok` unless an error status or no answer at all. */
  answered(path: string, ok: boolean): void {
    this.counts.responses += 1;
    if (!ok) bump(this.counts.failedByRoute, routeOf(path));
    for (const waiter of this.#waiters) {
      if (this.counts.responses < waiter.count) continue;
      this.#waiters.delete(waiter);
      waiter.resolve();
    }
  }

  /** Resolves once `count` requests in all have been answered. */
  whenAnswered(count: number): Promise<void> {
    if (this.counts.responses >= count) return Promise.resolve();
    return new Promise((resolve) => this.#waiters.add({ count, resolve }));
  }

  /** A copy of the counts, to subtract later with {@link RequestCounter.since}. */
  snapshot(): RequestCounts {
    return copyCounts(this.counts);
  }

  /** What was counted since `before` was taken. */
  since(before: RequestCounts): RequestCounts {
    return diffCounts(this.counts, before);
  }

  /** What was counted while `operation` ran. */
  async during(operation: () => Promise<unknown>): Promise<RequestCounts> {
    const before = this.snapshot();
    await operation();
    return this.since(before);
  }
}

export function copyCounts(counts: Readonly<RequestCounts>): RequestCounts {
  return {
    ...counts,
    byPath: { ...counts.byPath },
    failedByRoute: { ...counts.failedByRoute },
    uncountedByRoute: { ...counts.uncountedByRoute },
  };
}

/** `after − before`, leaving out the entries that did not change. */
export function diffCounts(after: Readonly<RequestCounts>, before: Readonly<RequestCounts>): RequestCounts {
  return {
    requests: after.requests - before.requests,
    commands: after.commands - before.commands,
    requestBytes: after.requestBytes - before.requestBytes,
    byPath: diffRecord(after.byPath, before.byPath),
    responses: after.responses - before.responses,
    failedByRoute: diffRecord(after.failedByRoute, before.failedByRoute),
    uncountedByRoute: diffRecord(after.uncountedByRoute, before.uncountedByRoute),
  };
}

/** Adds `more` into `into`, e.g. the counts of several processes. */
export function addCounts(into: RequestCounts, more: Readonly<RequestCounts>): void {
  into.requests += more.requests;
  into.commands += more.commands;
  into.requestBytes += more.requestBytes;
  into.responses += more.responses;
  addRecord(into.byPath, more.byPath);
  addRecord(into.failedByRoute, more.failedByRoute);
  addRecord(into.uncountedByRoute, more.uncountedByRoute);
}

/** Requests by route (`/subscribe/a` and `/subscribe/b` are both `/subscribe`), from `byPath`. */
export function byRoute(counts: Readonly<RequestCounts>): Record<string, number> {
  const routes: Record<string, number> = {};
  for (const [path, requests] of Object.entries(counts.byPath)) bump(routes, routeOf(path), requests);
  return routes;
}

/** The proxy's own counters read as a counter's: its `commands` leave out the subscriptions it opened. */
export function billedAtProxy(
  stats: Readonly<ProxyStats>,
): Pick<RequestCounts, "requests" | "commands" | "requestBytes"> {
  return {
    requests: stats.requests,
    commands: stats.commands + stats.subscriptions,
    requestBytes: stats.requestBytes,
  };
}

/** The first path segment of a request target: `/`, `/pipeline`, `/subscribe`, ... */
export function routeOf(path: string): string {
  return `/${pathOf(path).split("/")[1] ?? ""}`;
}

/**
 * Commands billed for one request on `route` with `body` (the JSON text the client sent). Undefined
 * where the billing rules do not say (another route, or a batch body that is not a JSON array).
 */
export function billedCommands(route: string, body: string | undefined): number | undefined {
  switch (route) {
    case "/":
    case "/subscribe":
    case "/psubscribe":
      return 1;
    case "/pipeline":
    case "/multi-exec":
      return commandsInBatch(body);
    default:
      return undefined;
  }
}

function commandsInBatch(body: string | undefined): number | undefined {
  try {
    const parsed = JSON.parse(body ?? "") as unknown;
    return Array.isArray(parsed) && parsed.every(Array.isArray) ? parsed.length : undefined;
  } catch {
    return undefined;
  }
}

/** The path of a request target, without its query. */
function pathOf(target: string): string {
  return new URL(target, "http://request-counter.invalid").pathname;
}

function bump(record: Record<string, number>, key: string, by = 1): void {
  record[key] = (record[key] ?? 0) + by;
}

function diffRecord(after: Record<string, number>, before: Record<string, number>): Record<string, number> {
  const result: Record<string, number> = {};
  for (const [key, value] of Object.entries(after)) {
    const delta = value - (before[key] ?? 0);
    if (delta !== 0) result[key] = delta;
  }
  return result;
}

function addRecord(into: Record<string, number>, more: Record<string, number>): void {
  for (const [key, value] of Object.entries(more)) bump(into, key, value);
}
