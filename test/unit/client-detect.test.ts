import { Redis as UpstashRedis } from "@upstash/redis";
import { Cluster, Redis as IoRedis } from "ioredis";
import { createClient, createCluster } from "redis";
import { afterAll, describe, expect, it } from "vitest";
import { detectClient } from "../../src/client/detect";
import { assertEvalClient, scriptRunnerFor } from "../../src/client/script-runner";
import { guessServerKind } from "../../src/client/server";
import type { RedisClient } from "../../src/client/types";

// Real client objects that never connect: detection must work on the libraries' own objects,
// not only on fakes shaped after them. The annotations check that each one is a RedisClient.
const upstash: RedisClient = new UpstashRedis({
  url: "http://127.0.0.1:1",
  token: "t",
  enableTelemetry: false,
});
const ioredis: RedisClient = new IoRedis({ lazyConnect: true });
const ioredisCluster: RedisClient = new Cluster([{ host: "127.0.0.1", port: 1 }], { lazyConnect: true });
const nodeRedis: RedisClient = createClient();
const nodeRedisCluster: RedisClient = createCluster({ rootNodes: [{ url: "redis://127.0.0.1:1" }] });

afterAll(() => {
  (ioredis as IoRedis).disconnect();
  (ioredisCluster as Cluster).disconnect();
});

describe("detectClient", () => {
  it.each([
    ["@upstash/redis", upstash, "eval"],
    ["ioredis Redis", ioredis, "ioredis"],
    ["ioredis Cluster", ioredisCluster, "ioredis"],
    ["node-redis createClient", nodeRedis, "node-redis"],
    ["node-redis createCluster", nodeRedisCluster, "node-redis"],
    ["node-redis withTypeMapping", createClient().withTypeMapping({}), "node-redis"],
  ])("recognises %s", (_name, client, kind) => {
    expect(detectClient(client)?.kind).toBe(kind);
  });

  it("takes any other object with eval as a generic client", () => {
    expect(detectClient({ eval: async () => 1 })?.kind).toBe("eval");
    expect(detectClient({ eval: async () => 1, evalsha: async () => 1 })?.kind).toBe("eval");
  });

  it("does not take a generic client for ioredis or node-redis on one marker alone", () => {
    expect(detectClient({ eval: async () => 1, evalsha: async () => 1, isCluster: false })?.kind).toBe(
      "eval",
    );
    expect(detectClient({ eval: async () => 1, isCluster: "no", defineCommand: () => {} })?.kind).toBe(
      "eval",
    );
    expect(detectClient({ eval: async () => 1, evalSha: async () => 1 })?.kind).toBe("eval");
  });

  it.each([
    ["undefined", undefined],
    ["null", null],
    ["a string", "redis://localhost"],
    ["an object without eval", {}],
    ["an object whose eval is not a function", { eval: 1 }],
    ["a function", () => {}],
  ])("rejects %s", (_name, value) => {
    expect(detectClient(value)).toBeUndefined();
  });
});

describe("assertEvalClient", () => {
  it.each([
    [undefined, /got undefined$/],
    [null, /got null$/],
    ["redis://localhost", /got "redis:\/\/localhost"$/],
    [{ evalsha: async () => 1 }, /got an object \(object\)$/],
    [[], /got an array$/],
  ])("throws a TypeError naming `redis` and the value for %o", (value, described) => {
    expect(() => assertEvalClient(value)).toThrow(TypeError);
    expect(() => assertEvalClient(value)).toThrow(/^Expected `redis` to be a Redis client.*eval/);
    expect(() => assertEvalClient(value)).toThrow(described);
  });

  it("accepts every supported client", () => {
    for (const client of [upstash, ioredis, ioredisCluster, nodeRedis, nodeRedisCluster]) {
      expect(() => assertEvalClient(client)).not.toThrow();
    }
  });

  it("is what scriptRunnerFor throws for an unusable client", () => {
    expect(() => scriptRunnerFor({} as RedisClient, false)).toThrow(/^Expected `redis` to be a Redis client/);
  });
});

describe("guessServerKind", () => {
  const upstashHost = "eu1-example-12345.upstash.io";
  const lazyIoredis = (options: object) => new IoRedis({ lazyConnect: true, ...options });
  const created: IoRedis[] = [];
  afterAll(() => {
    for (const client of created) client.disconnect();
  });

  it.each([
    ["@upstash/redis", () => upstash, "upstash"],
    ["a generic eval client", () => ({ eval: async () => 1, evalsha: async () => 1 }), "redis"],
    ["ioredis on localhost", () => ioredis, "redis"],
    [
      "ioredis on an Upstash endpoint",
      () => {
        const client = lazyIoredis({ host: upstashHost, tls: {} });
        created.push(client);
        return client;
      },
      "upstash",
    ],
    [
      "ioredis from an Upstash URL",
      () => {
        const client = new IoRedis(`rediss://default:secret@${upstashHost}:6379`, { lazyConnect: true });
        created.push(client);
        return client;
      },
      "upstash",
    ],
    ["an ioredis Cluster on localhost", () => ioredisCluster, "redis"],
    ["node-redis on localhost", () => nodeRedis, "redis"],
    [
      "node-redis from an Upstash URL",
      () => createClient({ url: `rediss://default:x@${upstashHost}:6379` }),
      "upstash",
    ],
    [
      "node-redis with an Upstash socket host",
      () => createClient({ socket: { host: upstashHost } }),
      "upstash",
    ],
    ["a host that only contains upstash.io", () => lazyIoredis({ host: "upstash.io.example.com" }), "redis"],
  ])("%s → %s", (_name, make, kind) => {
    expect(guessServerKind(make())).toBe(kind);
  });
});
