import { Redis as UpstashRedis } from "@upstash/redis";
import { Cluster, Redis as IoRedis } from "ioredis";
import { createClient } from "redis";
import { afterAll, describe, expect, it } from "vitest";
import type { RedisClient } from "../../../src/redis/client";
import { guessServerKind } from "../../../src/redis/server";

const upstash: RedisClient = new UpstashRedis({
  url: "http://127.0.0.1:1",
  token: "t",
  enableTelemetry: false,
});
const ioredis = new IoRedis({ lazyConnect: true });
const ioredisCluster = new Cluster([{ host: "127.0.0.1", port: 1 }], { lazyConnect: true });
const nodeRedis = createClient();
afterAll(() => {
  ioredis.disconnect();
  ioredisCluster.disconnect();
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
