import type { Redis } from "@upstash/redis";
import { Redis as IoRedis } from "ioredis";
import { afterAll, afterEach, beforeAll } from "vitest";
import { type LocalStack, startLocalStack } from "../../../stack/local-stack";
import { type RedisServerHandle, startRedisServer } from "../../../stack/redis-server";
import { clientFor } from "../../faults/support/endpoints";
import { type PassThrough, startPassThrough } from "../../support/pass-through";

/** A file's private quorum members: redis-servers started once, thawed after each test, and clients to them. */
export interface Members {
  /** The servers, in member order, to freeze or thaw. */
  servers(): readonly RedisServerHandle[];
  /** Fresh ioredis clients of the first `size` servers, disconnected when the file ends. */
  connect(size: number, options?: { commandTimeout?: number }): IoRedis[];
}

/** Starts `count` redis-servers for the calling test file (its hooks stop them). */
export function useMembers(count = 5): Members {
  let servers: RedisServerHandle[] = [];
  const clients: IoRedis[] = [];
  beforeAll(async () => {
    servers = await Promise.all(Array.from({ length: count }, () => startRedisServer()));
  }, 60_000);
  afterAll(async () => {
    for (const client of clients) client.disconnect();
    await Promise.all(servers.map((server) => server.stop()));
  });
  afterEach(() => {
    for (const server of servers) server.thaw();
  });
  return {
    servers: () => servers,
    connect(size, options = {}) {
      const made = servers.slice(0, size).map((server) => {
        const client = new IoRedis(server.port, "127.0.0.1", options);
        // Timeouts and reconnects are expected here; an error listener keeps them from being thrown.
        client.on("error", () => {});
        return client;
      });
      clients.push(...made);
      return made;
    },
  };
}

/** A member over HTTP: its own redis-server and Upstash proxy, and a fault-injecting pass-through in front. */
export interface HttpMember {
  readonly passThrough: PassThrough;
  /** Through the pass-through, whose faults reach this member alone. */
  readonly faulty: Redis;
  /** Straight to the proxy, to look at the member's keys. */
  readonly direct: Redis;
}

/**
 * Starts `count` HTTP members for the calling test file: each request is its own, so one member's slow
 * reply lets a later request to it overtake an earlier one, as on Upstash (a TCP connection keeps order).
 */
export function useHttpMembers(count = 3): () => readonly HttpMember[] {
  const stacks: LocalStack[] = [];
  const members: HttpMember[] = [];
  beforeAll(async () => {
    for (let index = 0; index < count; index++) {
      const stack = await startLocalStack();
      stacks.push(stack);
      const passThrough = await startPassThrough({ target: stack.url });
      const { token } = stack;
      members.push({
        passThrough,
        faulty: clientFor({ url: passThrough.url, token }),
        direct: clientFor({ url: stack.url, token }),
      });
    }
  }, 60_000);
  afterEach(() => {
    for (const member of members) member.passThrough.faults.reset();
  });
  afterAll(async () => {
    await Promise.all(members.map((member) => member.passThrough.close()));
    await Promise.all(stacks.map((stack) => stack.stop()));
  });
  return () => members;
}
