import { Redis as UpstashRedis } from "@upstash/redis";
import { Redis as IoRedis } from "ioredis";
import { createClient } from "redis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { quorum } from "../../src/index";
import type { RedisClient } from "../../src/redis/client";
import { startLocalStack } from "../../stack/local-stack";
import { type RedisServerHandle, startRedisServer } from "../../stack/redis-server";
import { describeLockContract, describeSemaphoreContract } from "./contract";

// Three independent redis-servers: the quorum topology, with each kind of client.
let servers: RedisServerHandle[] = [];

beforeAll(async () => {
  servers = await Promise.all([startRedisServer(), startRedisServer(), startRedisServer()]);
});

afterAll(async () => {
  await Promise.all(servers.map((server) => server.stop()));
});

interface Connected {
  readonly clients: readonly RedisClient[];
  close(): Promise<unknown>;
}

type Connect = (ports: readonly number[], errors: unknown[]) => Promise<Connected>;

const upstash: Connect = async (ports) => {
  const stacks = await Promise.all(
    ports.map((port) => startLocalStack({ redisUrl: `redis://127.0.0.1:${port}` })),
  );
  const clients = stacks.map(
    (stack) => new UpstashRedis({ url: stack.url, token: stack.token, retry: false, enableTelemetry: false }),
  );
  return { clients, close: () => Promise.all(stacks.map((stack) => stack.stop())) };
};

const ioredis: Connect = async (ports, errors) => {
  const clients = ports.map((port) => {
    const client = new IoRedis(port, "127.0.0.1", { protocol: 2 });
    client.on("error", (error) => errors.push(error));
    return client;
  });
  return { clients, close: () => Promise.all(clients.map((client) => client.quit())) };
};

const nodeRedis: Connect = async (ports, errors) => {
  const clients = await Promise.all(
    ports.map(async (port) => {
      const client = createClient({ url: `redis://127.0.0.1:${port}` });
      client.on("error", (error) => errors.push(error));
      await client.connect();
      return client;
    }),
  );
  return { clients, close: () => Promise.all(clients.map((client) => client.close())) };
};

describe.each<[string, Connect]>([
  ["@upstash/redis (REST proxies)", upstash],
  ["ioredis", ioredis],
  ["node-redis", nodeRedis],
])("%s on a quorum of 3 independent redis-servers", (_name, connect) => {
  const errors: unknown[] = [];
  let connected: Connected;

  beforeAll(async () => {
    connected = await connect(
      servers.map((server) => server.port),
      errors,
    );
  });

  afterAll(async () => {
    await connected?.close();
  });

  describeLockContract(() => quorum(connected.clients), { fencing: false });
  describeSemaphoreContract(() => quorum(connected.clients), { fencing: false, fair: false });

  it("emitted no client errors", () => {
    expect(errors).toEqual([]);
  });
});
