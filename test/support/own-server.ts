import { Redis as IoRedis, type RedisOptions } from "ioredis";
import { afterAll, beforeAll } from "vitest";
import { type RedisServerHandle, type RedisServerOptions, startRedisServer } from "../../stack/redis-server";

/** ioredis's options, but its `replyMapping` (whose type does not take `undefined` under exactOptionalPropertyTypes). */
type ClientOptions = Omit<RedisOptions, "replyMapping">;

/** A redis-server of the calling test file's (or describe block's) own, and ioredis clients of it. */
export interface OwnServer {
  /** The server: its port and url, to freeze, thaw or restart. Available inside tests and later hooks. */
  server(): RedisServerHandle;
  /** A new ioredis client of the server, disconnected once the file's (or block's) tests have run. */
  connect(options?: ClientOptions): IoRedis;
}

/**
 * Starts a redis-server before the calling file's (or describe block's) tests and stops it after them,
 * disconnecting the clients {@link OwnServer.connect} made first. Hooks registered after this call run
 * before its stop (vitest runs `afterAll` hooks last-registered first), so they may still use the server.
 * @param options as {@link startRedisServer}'s, e.g. `{ extraArgs: ["--requirepass", "secret"] }`.
 */
export function useRedisServer(options: RedisServerOptions = {}): OwnServer {
  let running: RedisServerHandle | undefined;
  const clients: IoRedis[] = [];
  beforeAll(async () => {
    running = await startRedisServer(options);
  }, 30_000);
  afterAll(async () => {
    for (const client of clients.splice(0)) client.disconnect();
    await running?.stop();
  });
  const server = (): RedisServerHandle => {
    if (running === undefined) throw new Error("The test file's redis-server is only available inside tests");
    return running;
  };
  return {
    server,
    connect(clientOptions = {}) {
      const client = new IoRedis(server().port, "127.0.0.1", clientOptions);
      clients.push(client);
      return client;
    },
  };
}
