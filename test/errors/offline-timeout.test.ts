// A client's own timeout reads "Redis did not answer" (1c824ab), but with ioredis's default offline queue and
// a commandTimeout, a server refusing connections (ECONNREFUSED) also ends each command with "Command timed
// out": the command never left the offline queue, Redis was never reached (review helper-27).
// The other way round (review helper-152, 3/3): node-redis marks itself not ready on a socket timeout before
// it fails the commands awaiting a reply, so a try that reached a frozen Redis (and ran there once thawed)
// read "could not be reached". And node-redis writes its offline queue with its handshake, before it is ready:
// a try queued while it connected reached Redis too (review helper-154, 3/3). Only ioredis's timeouts can
// tell a command that waited for a connection (not ready from its send to its failure).
import { createServer } from "node:net";
import { Redis as IoRedis } from "ioredis";
import { createClient, type RedisClientType } from "redis";
import { afterAll, describe, expect, it } from "vitest";
import { Lock, LockRedisError } from "../../src/index";
import { type RedisServerHandle, startRedisServer } from "../../stack/redis-server";

const opened: IoRedis[] = [];
afterAll(() => {
  for (const client of opened) client.disconnect();
});

async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

describe("ioredis with commandTimeout, Redis refusing connections", () => {
  it("says Redis could not be reached, not that it did not answer", async () => {
    const port = await closedPort();
    const seen: string[] = [];
    const redis = new IoRedis(port, "127.0.0.1", { commandTimeout: 300 });
    redis.on("error", (e: Error) => seen.push(e.message));
    opened.push(redis);
    const lock = new Lock({ id: `review-today:${crypto.randomUUID()}`, redis, lease: 5_000 });
    const error = await lock.acquire({ retry: { attempts: 1 } }).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(LockRedisError);
    expect(seen.some((m) => /ECONNREFUSED/.test(m))).toBe(true); // the client saw the refusal
    expect((error as LockRedisError).reason).toMatch(/^Redis could not be reached/);
  });
});

/**
 * Runs `tryIt` with a node-redis client that times out a socket silent for 300 ms and never reconnects, on a
 * fresh Redis it may freeze; the reason the lock's error gives.
 */
async function nodeRedisReason(
  tryIt: (client: RedisClientType, server: RedisServerHandle) => Promise<unknown>,
): Promise<string> {
  const server = await startRedisServer();
  const client: RedisClientType = createClient({
    url: server.url,
    socket: { socketTimeout: 300, reconnectStrategy: false },
  });
  client.on("error", () => {});
  try {
    const error = await tryIt(client, server).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(LockRedisError);
    return (error as LockRedisError).reason;
  } finally {
    server.thaw();
    client.destroy();
    await server.stop();
  }
}

describe("node-redis with socketTimeout", () => {
  it("says Redis did not answer when it froze with a try in flight", async () => {
    const reason = await nodeRedisReason(async (client, server) => {
      await client.connect();
      const lock = new Lock({ id: `review-today:${crypto.randomUUID()}`, redis: client, lease: 5_000 });
      await lock.getStatus(); // connected and answering
      server.freeze();
      return lock.acquire({ retry: { attempts: 1 } });
    });
    expect(reason).toMatch(/^Redis did not answer/);
  });

  it("says Redis did not answer for a try queued while it connects: the queue goes with the handshake", async () => {
    const reason = await nodeRedisReason(async (client, server) => {
      server.freeze();
      const connecting = client.connect().catch(() => {});
      const lock = new Lock({ id: `review-today:${crypto.randomUUID()}`, redis: client, lease: 30_000 });
      return lock.acquire({ retry: { attempts: 1 } }).finally(() => connecting);
    });
    expect(reason).toMatch(/^Redis did not answer/);
  });
});
