import type { Command } from "../resp/command";
import { HttpError } from "./http-error";

/**
 * Commands that would change the state of a shared connection, take it over, or block it. Upstash rejects
 * them too (its REST API supports only PING and ECHO from the connection group).
 */
const CONNECTION_STATE = [
  "multi",
  "exec",
  "discard",
  "watch",
  "unwatch",
  "select",
  "auth",
  "hello",
  "quit",
  "reset",
  "client",
  "readonly",
  "readwrite",
  "asking",
  "monitor",
  "subscribe",
  "psubscribe",
  "ssubscribe",
  "unsubscribe",
  "punsubscribe",
  "sunsubscribe",
  "sync",
  "psync",
  "replconf",
];

const BLOCKING = [
  "blpop",
  "brpop",
  "brpoplpush",
  "blmove",
  "blmpop",
  "bzpopmin",
  "bzpopmax",
  "bzmpop",
  "wait",
  "waitaof",
];

const FORBIDDEN: ReadonlySet<string> = new Set([...CONNECTION_STATE, ...BLOCKING]);

/** Stream reads block only with a BLOCK option, which comes before the STREAMS keyword. */
const BLOCKING_WITH_OPTION: ReadonlySet<string> = new Set(["xread", "xreadgroup"]);

/** Pub/Sub commands besides PUBLISH and PUBSUB, the only ones the REST API supports (subscribing is a stream). */
const OTHER_PUBSUB: ReadonlySet<string> = new Set(["spublish"]);

/**
 * Why the REST API refuses `command` (`ERR ...` naming it), or undefined when it is allowed: blocking and
 * connection-state commands, and Pub/Sub beyond PUBLISH and PUBSUB.
 */
export function refusalOf(command: Command): string | undefined {
  const name = String(command[0] ?? "").toLowerCase();
  if (FORBIDDEN.has(name) || (BLOCKING_WITH_OPTION.has(name) && hasBlockOption(command))) {
    return `ERR command '${name}' is not supported by the REST API: blocking and connection-state commands are rejected`;
  }
  if (OTHER_PUBSUB.has(name)) {
    return `ERR command '${name}' is not supported by the REST API: of Pub/Sub, only PUBLISH and PUBSUB are`;
  }
  return undefined;
}

/**
 * Rejects a refused command (see {@link refusalOf}) before anything is sent to Redis.
 *
 * @throws HttpError 400 `ERR ...` naming the command.
 */
export function assertCommandAllowed(command: Command): void {
  const refusal = refusalOf(command);
  if (refusal !== undefined) {
    throw new HttpError(400, refusal);
  }
}

function hasBlockOption(command: Command): boolean {
  for (const arg of command.slice(1)) {
    const word = String(arg).toLowerCase();
    if (word === "streams") {
      return false;
    }
    if (word === "block") {
      return true;
    }
  }
  return false;
}
