import { Lock, LockRedisError } from "@upstash/lock";
import { beforeAll, describe, expect, inject, it } from "vitest";
import { findFreePort } from "../../stack/free-port";
import { useRedisServer } from "../support/own-server";
import { uniqueId } from "../support/redis";

// examples/fast-failure.ts: clients that work with a lock, and that make a lock fail within a few
// hundred milliseconds once Redis is gone, rather than after the client's own retries.
const { server } = useRedisServer();
let example: typeof import("../../examples/fast-failure");

beforeAll(async () => {
  example = await import("../../examples/fast-failure");
}, 30_000);

/** How long `lock.acquire()` took to reject, and with what. */
async function failure(lock: Lock): Promise<{ ms: number; error: unknown }> {
  const started = performance.now();
  const error = await lock.acquire().then(
    () => undefined,
    (reason: unknown) => reason,
  );
  return { ms: performance.now() - started, error };
}

describe("examples/fast-failure.ts", () => {
  it("@upstash/redis without retries: a lock works, and an endpoint that refuses fails it at once", async () => {
    const redis = example.upstashClient(inject("upstashUrl"), inject("upstashToken"));
    const lock = new Lock({ id: uniqueId("fast-upstash"), redis });
    expect(await lock.acquire()).toBe(true);
    expect(await lock.release()).toBe(true);

    const nobody = `http://127.0.0.1:${await findFreePort()}`;
    const { ms, error } = await failure(
      new Lock({ id: uniqueId("fast-upstash"), redis: example.upstashClient(nobody, "t") }),
    );
    expect(error).toBeInstanceOf(LockRedisError);
    expect((error as LockRedisError).reason).toMatch(/^Redis could not be reached/);
    expect(ms).toBeLessThan(2_000); // the client's default retries alone take about 4.3 s per try
  });

  it("ioredis and node-redis: a lock works, and once Redis is gone every call fails at once", async () => {
    const ioredis = await example.ioredisClient(server().url);
    ioredis.on("error", () => {}); // reconnection errors once the server stops
    const nodeRedis = await example.nodeRedisClient(server().url);
    try {
      for (const redis of [ioredis, nodeRedis]) {
        const lock = new Lock({ id: uniqueId("fast-tcp"), redis });
        expect(await lock.acquire()).toBe(true);
        expect(await lock.release()).toBe(true);
      }
      await server().stop();
      for (const redis of [ioredis, nodeRedis]) {
        const { ms, error } = await failure(new Lock({ id: uniqueId("fast-tcp"), redis }));
        expect(error).toBeInstanceOf(LockRedisError);
        expect((error as LockRedisError).reason).toMatch(/^Redis could not be reached/);
        expect(ms).toBeLessThan(2_000);
      }
    } finally {
      ioredis.disconnect();
      nodeRedis.destroy();
    }
  });
});
