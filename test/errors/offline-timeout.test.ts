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
import { createClient } from "redis";
import { afterAll, describe, expect, it } from "vitest";
import { Lock, LockRedisError } from "../../src/index";
import { startRedisServer } from "../../stack/redis-server";

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

describe("node-redis with socketTimeout, Redis frozen with a try in flight", () => {
  it("says Redis did not answer, not that it could not be reached", async () => {
    const server = await startRedisServer();
    const client = createClient({
      url: server.url,
      socket: { socketTimeout: 300, reconnectStrategy: false },
    });
    client.on("error", () => {});
    try {
      await client.connect();
      const id = `review-today:${crypto.randomUUID()}`;
      const lock = new Lock({ id, redis: client, lease: 5_000 });
      await lock.getStatus(); // connected and answering
      server.freeze();
      const error = await lock.acquire({ retry: { attempts: 1 } }).catch((caught: unknown) => caught);
      server.thaw();
      expect(error).toBeInstanceOf(LockRedisError);
      expect((error as LockRedisError).reason).toMatch(/^Redis did not answer/);
    } finally {
      server.thaw();
      client.destroy();
      await server.stop();
    }
  });
});

describe("node-redis with socketTimeout, a try queued while it connects to a frozen Redis", () => {
  it("says Redis did not answer: the queue went out with the handshake, and the try ran", async () => {
    const server = await startRedisServer();
    const client = createClient({
      url: server.url,
      socket: { socketTimeout: 300, reconnectStrategy: false },
    });
    client.on("error", () => {});
    try {
      server.freeze();
      const connecting = client.connect().catch(() => {});
      const id = `review-today:${crypto.randomUUID()}`;
      const lock = new Lock({ id, redis: client, lease: 30_000 });
      const error = await lock.acquire({ retry: { attempts: 1 } }).catch((caught: unknown) => caught);
      await connecting;
      server.thaw();
      expect(error).toBeInstanceOf(LockRedisError);
      expect((error as LockRedisError).reason).toMatch(/^Redis did not answer/);
    } finally {
      server.thaw();
      client.destroy();
      await server.stop();
    }
  });
});
