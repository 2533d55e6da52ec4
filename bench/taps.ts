/**
 * Where a benchmark worker process counts what its clients send, with the shared
 * {@link RequestCounter}: at `fetch` (which `@upstash/redis` calls for every command, pipeline and
 * subscription) and at ioredis's `sendCommand` (every command of every connection, duplicated
 * subscriber connections included). Counting in the process adds no hop on the wire; the
 * orchestrator cross-checks the HTTP totals with the proxy's own counters.
 */
import { Redis } from "ioredis";
import { RequestCounter } from "../test/support/request-counter";

let fetches: RequestCounter | undefined;
let ioredisCommands: RequestCounter | undefined;

/** Wraps the global `fetch` once and returns its live counter. */
export function countFetches(): RequestCounter {
  if (fetches) return fetches;
  const counter = new RequestCounter();
  const original = globalThis.fetch;
  globalThis.fetch = (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
    const url = new URL(typeof input === "string" || input instanceof URL ? input : input.url);
    counter.request(url.pathname);
    counter.body(url.pathname, typeof init?.body === "string" ? init.body : undefined);
    const response = original(input, init);
    response.then(
      (answer) => counter.answered(url.pathname, answer.ok),
      () => counter.answered(url.pathname, false),
    );
    return response;
  };
  fetches = counter;
  return counter;
}

/**
 * Wraps ioredis's `sendCommand` once and returns its live counter: commands by name, at the client,
 * where the server's `total_commands_processed` also counts every command a Lua script runs.
 */
export function countIoredisCommands(): RequestCounter {
  if (ioredisCommands) return ioredisCommands;
  const counter = new RequestCounter();
  const prototype = Redis.prototype as unknown as {
    sendCommand: (this: Redis, command: { name: string }, ...rest: unknown[]) => unknown;
  };
  const original = prototype.sendCommand;
  prototype.sendCommand = function (this: Redis, command, ...rest) {
    counter.command(command.name);
    return original.call(this, command, ...rest);
  };
  ioredisCommands = counter;
  return counter;
}

/** Commands a client sends to set up a connection, not to take or free a lock. */
export const CONNECTION_SETUP_COMMANDS = new Set(["hello", "info", "client", "select", "auth"]);

/** Commands of the pub/sub wake-up path. */
export const PUBSUB_COMMANDS = new Set(["subscribe", "unsubscribe", "ssubscribe", "sunsubscribe"]);
