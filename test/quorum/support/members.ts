import { Redis as IoRedis } from "ioredis";
import { afterAll, afterEach, beforeAll } from "vitest";
import { type RedisServerHandle, startRedisServer } from "../../../stack/redis-server";

/** A file's private quorum members: redis-servers started once, thawed after each test, and clients to them. */
export interface Members {
  /** The servers, in member order, to freeze or thaw. */
  servers(): readonly RedisServerHandle[];
  /** Fresh ioredis clients of the first `size` servers, disconnected when the file ends. */
  connect(size: number, options?: { commandTimeout?: number }): IoRedis[];
}

/** Starts `count` redis-servers for the calling test file (its hooks stop them). */
export function useMembers(count = 5): Members {
  let servers: RedisServerHandle[] = [];
  const clients: IoRedis[] = [];
  beforeAll(async () => {
    servers = await Promise.all(Array.from({ length: count }, () => startRedisServer()));
  }, 60_000);
  afterAll(async () => {
    for (const client of clients) client.disconnect();
    await Promise.all(servers.map((server) => server.stop()));
  });
  afterEach(() => {
    for (const server of servers) server.thaw();
  });
  return {
    servers: () => servers,
    connect(size, options = {}) {
      const made = servers.slice(0, size).map((server) => {
        const client = new IoRedis(server.port, "127.0.0.1", options);
        // Timeouts and reconnects are expected here; an error listener keeps them from being thrown.
        client.on("error", () => {});
        return client;
      });
      clients.push(...made);
      return made;
    },
  };
}
