// A client's own timeout reads "Redis did not answer" (1c824ab), but with ioredis's default offline queue and
// a commandTimeout, a server refusing connections (ECONNREFUSED) also ends each command with "Command timed
// out": the command never left the offline queue, Redis was never reached (review helper-27).
import { createServer } from "node:net";
import { Redis as IoRedis } from "ioredis";
import { afterAll, describe, expect, it } from "vitest";
import { Lock, LockRedisError } from "../../src/index";

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
