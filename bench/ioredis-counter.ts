import { Redis } from "ioredis";

/**
 * Counts the commands this process sends through ioredis, by name, at the client: round trips,
 * where the server's `total_commands_processed` also counts every command a Lua script runs.
 * Covers every connection, duplicated subscriber connections included.
 */
const live: Record<string, number> = {};
let installed = false;

export function countIoredisCommands(): Record<string, number> {
  if (installed) return live;
  installed = true;
  const prototype = Redis.prototype as unknown as {
    sendCommand: (this: Redis, command: { name: string }, ...rest: unknown[]) => unknown;
  };
  const original = prototype.sendCommand;
  prototype.sendCommand = function (this: Redis, command, ...rest) {
    const name = command.name.toLowerCase();
    live[name] = (live[name] ?? 0) + 1;
    return original.call(this, command, ...rest);
  };
  return live;
}

/** Commands a client sends to set up a connection, not to take or free a lock. */
export const CONNECTION_SETUP_COMMANDS = new Set(["hello", "info", "client", "select", "auth"]);

/** Commands of the pub/sub wake-up path. */
export const PUBSUB_COMMANDS = new Set(["subscribe", "unsubscribe", "ssubscribe", "sunsubscribe"]);
