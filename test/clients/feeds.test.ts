// The wake-up subscription of the TCP clients when its extra connection hangs or fails: the wait
// goes on by polling and ends as planned, the hung connection is closed once nobody waits for it,
// and a failed one is not reused: the next wait connects afresh.
import { createServer, type Server, type Socket } from "node:net";
import { Redis as IoRedis } from "ioredis";
import { createClient } from "redis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Lock } from "../../src/index";
import { findFreePort } from "../../stack/free-port";
import { type RedisServerHandle, startRedisServer } from "../../stack/redis-server";
import { uniqueId } from "../support/redis";

let server: RedisServerHandle;
/** Accepts connections and never answers: a connect that hangs after the TCP handshake. */
let blackHole: Server;
let blackHolePort: number;
const blackHoleSockets = new Set<Socket>();
/** A port nothing listens on: a connect that fails. */
let closedPort: number;
const closers: (() => unknown)[] = [];

beforeAll(async () => {
  server = await startRedisServer();
  blackHole = createServer((socket) => {
    blackHoleSockets.add(socket);
    socket.on("close", () => blackHoleSockets.delete(socket));
    socket.on("error", () => {});
    // Reads (and ignores) what it is sent, so that it sees the client's close.
    socket.resume();
  });
  await new Promise<void>((resolve) => blackHole.listen(0, "127.0.0.1", resolve));
  blackHolePort = (blackHole.address() as { port: number }).port;
  closedPort = await findFreePort();
});

afterAll(async () => {
  for (const close of closers) await close();
  for (const socket of blackHoleSockets) socket.destroy();
  await new Promise((resolve) => blackHole.close(resolve));
  await server.stop();
});

/** `client`, except that `duplicate()` (what the feed opens its subscriber connection with) is `duplicate`. */
function withDuplicate<T extends object>(client: T, duplicate: () => unknown): T & { duplicates: number } {
  const counter = { duplicates: 0 };
  return new Proxy(client, {
    get(target, property) {
      if (property === "duplicate") {
        return () => {
          counter.duplicates += 1;
          return duplicate();
        };
      }
      if (property === "duplicates") return counter.duplicates;
      const value = Reflect.get(target, property, target);
      return typeof value === "function" ? value.bind(target) : value;
    },
  }) as T & { duplicates: number };
}

/** A long wait on a lock held throughout: three tries find the same holder, so it subscribes. */
async function waitOnHeldLock(redis: object, timeout: number): Promise<boolean> {
  const id = uniqueId("feed");
  const direct = new IoRedis(server.port, "127.0.0.1");
  closers.push(() => direct.quit());
  const holder = new Lock({ id, redis: direct, lease: 10_000 });
  await holder.acquireOrThrow();
  const waiter = new Lock({ id, redis: redis as never, retry: { attempts: 1_000, delay: 50 } });
  const acquired = await waiter.acquire({ timeout });
  await holder.release();
  return acquired;
}

async function until(condition: () => boolean, what: string): Promise<void> {
  for (let poll = 0; poll < 150 && !condition(); poll++)
    await new Promise((resolve) => setTimeout(resolve, 20));
  if (!condition()) throw new Error(`not within 3 s: ${what}`);
}

/** How to make the base client of a kind, and a subscriber client that hangs or fails to connect. */
interface ClientKind {
  base(): Promise<object>;
  hung(): object;
  failing(): object;
}

const kinds: [string, ClientKind][] = [
  [
    "ioredis",
    {
      base: async () => {
        const client = new IoRedis(server.port, "127.0.0.1");
        client.on("error", () => {});
        closers.push(() => client.quit());
        return client;
      },
      hung: () => new IoRedis(blackHolePort, "127.0.0.1").on("error", () => {}),
      failing: () =>
        new IoRedis(closedPort, "127.0.0.1", { retryStrategy: () => null, maxRetriesPerRequest: 0 }).on(
          "error",
          () => {},
        ),
    },
  ],
  [
    "node-redis",
    {
      base: async () => {
        const client = createClient({ url: server.url });
        client.on("error", () => {});
        await client.connect();
        closers.push(() => client.close());
        return client;
      },
      hung: () => createClient({ url: `redis://127.0.0.1:${blackHolePort}` }).on("error", () => {}),
      failing: () =>
        createClient({ url: `redis://127.0.0.1:${closedPort}`, socket: { reconnectStrategy: false } }).on(
          "error",
          () => {},
        ),
    },
  ],
];

describe.each(kinds)("%s", (_name, kind) => {
  it("a subscriber connection that hangs: the wait polls on and ends on time; the connection is closed after", async () => {
    const redis = withDuplicate(await kind.base(), kind.hung);
    const started = performance.now();
    expect(await waitOnHeldLock(redis, 800)).toBe(false);
    expect(performance.now() - started).toBeLessThan(800 + 300);
    expect(redis.duplicates).toBe(1);
    await until(() => blackHoleSockets.size === 0, "the hung connection to be closed");
  });

  it("a subscriber connection that fails: not reused; the next wait connects afresh", async () => {
    const redis = withDuplicate(await kind.base(), kind.failing);
    expect(await waitOnHeldLock(redis, 600)).toBe(false);
    expect(await waitOnHeldLock(redis, 600)).toBe(false);
    expect(redis.duplicates).toBe(2);
  });
});
