import { Redis as UpstashRedis } from "@upstash/redis";
import { Redis as IoRedis } from "ioredis";
import { createClient, RESP_TYPES } from "redis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { enableWakeUps, Lock } from "../../src/index";
import { eventChannel } from "../../src/keys";
import type { RedisClient } from "../../src/redis/client";
import { startLocalStack } from "../../stack/local-stack";
import { RespConnection } from "../../stack/resp/connection";
import { RespInteger } from "../../stack/resp/reply";
import { waitUntil } from "../faults/support/time";
import { useRedisServer } from "../support/own-server";
import { uniqueId } from "../support/redis";
import { describeClientContract, type ServerControls } from "./contract";

// One private redis-server for this file: its script cache may be flushed, unlike the suite's shared one.
const { server } = useRedisServer();
let admin: RespConnection;

beforeAll(async () => {
  admin = new RespConnection({ host: "127.0.0.1", port: server().port });
});

afterAll(async () => {
  admin?.close();
});

const controls: ServerControls = {
  async flushScripts() {
    await admin.call("SCRIPT", "FLUSH");
  },
  async scriptCached(sha1) {
    const [exists] = (await admin.call("SCRIPT", "EXISTS", sha1)) as RespInteger[];
    return exists instanceof RespInteger && exists.digits === "1";
  },
};

/** A connected client and how to close it; errors it emits are collected, never printed. */
interface Connected {
  readonly client: RedisClient;
  close(): Promise<unknown>;
  /**
   * SCRIPT EXISTS as the client sees it, where that differs from the server's: behind the REST
   * proxy, a key-locked script is cached under another SHA-1 than the client's (the proxy maps them).
   */
  scriptCached?(sha1: string): Promise<boolean>;
}

type Connect = (port: number, errors: unknown[]) => Promise<Connected>;

/** @upstash/redis through the local REST proxy, in front of this file's server. */
const upstash: Connect = async (port) => {
  const stack = await startLocalStack({ redisUrl: `redis://127.0.0.1:${port}` });
  const client = new UpstashRedis({
    url: stack.url,
    token: stack.token,
    retry: false,
    enableTelemetry: false,
  });
  return {
    client,
    close: () => stack.stop(),
    scriptCached: async (sha1) => (await client.scriptExists(sha1))[0] === 1,
  };
};

const ioredis =
  (options: { protocol?: 2 | 3; stringNumbers?: boolean }): Connect =>
  async (port, errors) => {
    const client = new IoRedis(port, "127.0.0.1", options);
    client.on("error", (error) => errors.push(error));
    return { client, close: () => client.quit() };
  };

/** node-redis; `numbersAsStrings` maps integer replies to strings, which must still read as numbers. */
const nodeRedis =
  ({ numbersAsStrings }: { numbersAsStrings: boolean }): Connect =>
  async (port, errors) => {
    const base = createClient({ url: `redis://127.0.0.1:${port}`, RESP: numbersAsStrings ? 2 : 3 });
    base.on("error", (error) => errors.push(error));
    await base.connect();
    const client = numbersAsStrings ? base.withTypeMapping({ [RESP_TYPES.NUMBER]: String }) : base;
    return { client, close: () => base.close() };
  };

/** Subscribers the server counts on `channel`. */
async function subscribers(channel: string): Promise<number> {
  const [, count] = (await admin.call("PUBSUB", "NUMSUB", channel)) as [unknown, RespInteger];
  return count.toNumber();
}

/** Client connections the server has open. */
async function connectedClients(): Promise<number> {
  const list = (await admin.call("CLIENT", "LIST")) as Buffer;
  return list.toString().trim().split("\n").length;
}

describe.each<[string, Connect]>([
  ["@upstash/redis (REST proxy)", upstash],
  ["ioredis (RESP2)", ioredis({ protocol: 2 })],
  ["ioredis (RESP3, stringNumbers: integers as strings)", ioredis({ stringNumbers: true })],
  ["node-redis (RESP3)", nodeRedis({ numbersAsStrings: false })],
  ["node-redis (RESP2, typeMapping: integers as strings)", nodeRedis({ numbersAsStrings: true })],
])("%s on one redis-server", (_name, connect) => {
  const errors: unknown[] = [];
  let connected: Connected;

  beforeAll(async () => {
    connected = await connect(server().port, errors);
  });

  afterAll(async () => {
    await connected?.close();
  });

  describeClientContract(() => connected.client, {
    flushScripts: controls.flushScripts,
    scriptCached: (sha1) => connected.scriptCached?.(sha1) ?? controls.scriptCached(sha1),
  });

  it("leaves no subscription or extra connection behind once a woken wait ends", async () => {
    enableWakeUps(connected.client);
    const id = uniqueId("wake-cleanup");
    const holder = new Lock({ id, redis: connected.client, lease: 60_000 });
    await holder.acquireOrThrow();
    const connectionsBefore = await connectedClients();
    // A wait on a 60 s lease: the waiter subscribes, then polls only every 20 s.
    const waiter = new Lock({
      id,
      redis: connected.client,
      retry: { attempts: 1_000, delay: 100, maxDelay: 20_000 },
    });
    const waiting = waiter.acquire();
    // The waiter subscribes: the server sees a subscriber on the lock's channel.
    const channel = (await eventChannel(id)) as string;
    await waitUntil(async () => (await subscribers(channel)) === 1, "a subscriber on the lock's channel");
    await holder.release();
    expect(await waiting).toBe(true);
    await waitUntil(async () => (await subscribers(channel)) === 0, "no subscriber left on the channel");
    await waitUntil(
      async () => (await connectedClients()) <= connectionsBefore,
      "no connection left beyond those before the wait",
    );
    await waiter.release();
  });

  it("emitted no client errors", () => {
    expect(errors).toEqual([]);
  });
});
