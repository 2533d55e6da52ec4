import { Redis as IoRedis } from "ioredis";
import { afterAll } from "vitest";
import type { RedisClient } from "../../../src/index";
import { clientFor, type PrivateStack, usePrivateStack } from "./endpoints";

/** The clients a test runs the same case over: ioredis over TCP, @upstash/redis through the local proxy. */
export type ClientName = "ioredis" | "upstash";

/**
 * A private stack for the file, and a way to open each client on it (call at the top of the file).
 * `ioredis()` also serves to look at keys directly; its connections close after the file's tests.
 */
export function useBothClients(): {
  readonly stack: () => PrivateStack;
  readonly ioredis: () => IoRedis;
  readonly clients: Readonly<Record<ClientName, () => RedisClient>>;
} {
  const stack = usePrivateStack();
  const opened: IoRedis[] = [];
  afterAll(() => {
    for (const client of opened) client.disconnect();
  });
  const ioredis = (): IoRedis => {
    const client = new IoRedis(stack().redis.url);
    client.on("error", () => {});
    opened.push(client);
    return client;
  };
  return { stack, ioredis, clients: { ioredis, upstash: () => clientFor(stack().endpoint) } };
}
