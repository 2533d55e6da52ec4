/**
 * What Upstash bills for one request to its REST API. Every command is billed: a single command on
 * `/`, each command of a `/pipeline` or `/multi-exec` body, and each subscription (a request to
 * `/subscribe/<channel>` or `/psubscribe/<pattern>` opens one server-sent-events stream: one
 * SUBSCRIBE; closing the stream sends nothing). See section 13 of the REST protocol notes.
 */

/** The first path segment of a request target: `/`, `/pipeline`, `/subscribe`, ... */
export function routeOf(path: string): string {
  return `/${new URL(path, "http://route.invalid").pathname.split("/")[1] ?? ""}`;
}

/**
 * Commands billed for one request on `route` with `body` (the JSON text the client sent). Undefined
 * where the rules above do not say (another route, or a batch body that is not a JSON array): the
 * counters then count 0 and keep the route, so the report can say which requests went uncounted.
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

/** A sentence for the report on requests whose commands were not counted, or undefined if none were. */
export function uncountedNote(uncounted: Readonly<Record<string, number>>): string | undefined {
  const entries = Object.entries(uncounted).filter(([, count]) => count > 0);
  if (entries.length === 0) return undefined;
  const list = entries.map(([route, count]) => `${count} on ${route}`).join(", ");
  return `Requests counted as 0 commands (route or body outside the billing rules): ${list}.`;
}
