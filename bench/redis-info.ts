import type { Redis } from "ioredis";

/** Server-side counters of a redis-server, from `INFO stats`. */
export interface ServerCounters {
  /** Every command executed, including those run inside Lua scripts. */
  commands: number;
  /** TCP connections accepted. */
  connections: number;
}

/**
 * Reads the counters. The INFO command itself is counted once the reply is built, so the next
 * reading is one higher than the traffic alone: {@link diffServer} subtracts it.
 */
export async function readServerCounters(redis: Redis): Promise<ServerCounters> {
  const text = await redis.info("stats");
  const field = (name: string) => Number(new RegExp(`^${name}:(\\d+)`, "m").exec(text)?.[1] ?? Number.NaN);
  return { commands: field("total_commands_processed"), connections: field("total_connections_received") };
}

/** Traffic between two readings, without the second INFO call itself. */
export function diffServer(after: ServerCounters, before: ServerCounters): ServerCounters {
  return {
    commands: after.commands - before.commands - 1,
    connections: after.connections - before.connections,
  };
}

export async function redisVersion(redis: Redis): Promise<string> {
  const text = await redis.info("server");
  return /^redis_version:(\S+)/m.exec(text)?.[1] ?? "unknown";
}
