import { describe, expect, it } from "vitest";
import { startLocalStack } from "../../stack/local-stack";
import { startRedisServer } from "../../stack/redis-server";
import { RespConnection } from "../../stack/resp/connection";
import { createClient } from "./helpers/clients";
import { keyPrefix } from "./helpers/keys";
import { rawRequest } from "./helpers/raw-http";

describe("startLocalStack", () => {
  it("starts a redis-server and the proxy, and stops both", async () => {
    const stack = await startLocalStack();
    expect(stack.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(stack.token).toMatch(/^[\w-]{32}$/);
    expect(stack.redis?.url).toBe(stack.redisUrl);
    expect(stack.redis?.port).not.toBe(6379);
    expect(await createClient(stack).ping()).toBe("PONG");
    await stack.stop();
    await stack.stop();
    await expect(fetch(stack.url, { method: "POST" })).rejects.toThrow();
    const connection = new RespConnection({ host: "127.0.0.1", port: stack.redis?.port ?? 0 });
    await expect(connection.call("PING")).rejects.toThrow(/ECONNREFUSED/);
  });

  it("fronts a given Redis and leaves it running on stop", async () => {
    const redis = await startRedisServer();
    const connection = new RespConnection({ host: "127.0.0.1", port: redis.port });
    try {
      const stack = await startLocalStack({ redisUrl: redis.url, token: "given-token" });
      expect(stack.redis).toBeUndefined();
      expect(stack.token).toBe("given-token");
      const key = keyPrefix("fronted");
      await createClient(stack).set(key, "through the proxy");
      await stack.stop();
      expect(String(await connection.call("GET", key))).toBe("through the proxy");
    } finally {
      connection.close();
      await redis.stop();
    }
  });

  it("honours maxBodyBytes: 413 JSON above the limit, accepted at it", async () => {
    const stack = await startLocalStack({ maxBodyBytes: 64 });
    try {
      const atLimit = JSON.stringify(["echo", "x".repeat(64 - '["echo",""]'.length)]);
      expect(atLimit).toHaveLength(64);
      expect((await rawRequest(stack, { body: atLimit })).status).toBe(200);
      const over = await rawRequest(stack, { body: JSON.stringify(["echo", "x".repeat(64)]) });
      expect(over.status).toBe(413);
      expect(over.json).toEqual({ error: "ERR max request size exceeded" });
      // The connection survives the 413: the next request on it works.
      expect((await rawRequest(stack, { json: ["ping"] })).json).toEqual({ result: "PONG" });
    } finally {
      await stack.stop();
    }
  });

  it("answers 500 JSON while Redis is down and recovers after a restart", async () => {
    const stack = await startLocalStack();
    const redis = createClient(stack);
    const key = keyPrefix("outage");
    try {
      expect(await redis.incr(key)).toBe(1);
      await stack.redis?.stop();
      const down = await rawRequest(stack, { json: ["incr", key] });
      expect(down.status).toBe(500);
      expect(down.headers.get("content-type")).toBe("application/json");
      expect(down.json).toEqual({ error: expect.stringMatching(/^ERR Redis is unreachable/) });
      await expect(redis.incr(key)).rejects.toThrow(/Redis is unreachable/);
      await expect(redis.multi().incr(key).exec()).rejects.toThrow(/Redis is unreachable/);
      await stack.redis?.restart();
      // A fresh server without persistence: the counter starts over.
      expect(await redis.incr(key)).toBe(1);
      expect(await redis.multi().incr(key).exec()).toEqual([2]);
    } finally {
      await stack.stop();
    }
  });

  it("rejects when the proxy port is taken", async () => {
    const first = await startLocalStack();
    try {
      await expect(startLocalStack({ port: first.proxy.port })).rejects.toThrow(/EADDRINUSE/);
    } finally {
      await first.stop();
    }
  });
});
