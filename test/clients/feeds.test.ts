// The wake-up subscription of the TCP clients when its extra connection hangs or fails: the wait
// goes on by polling and ends as planned, the hung connection is closed once nobody waits for it,
// and a failed one is not reused: the next wait connects afresh.
import { createServer, type Server, type Socket } from "node:net";
import { Redis as IoRedis } from "ioredis";
import { createClient } from "redis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { enableWakeUps, Lock } from "../../src/index";
import { eventChannel } from "../../src/keys";
import { findFreePort } from "../../stack/free-port";
import { waitUntil, within } from "../faults/support/time";
import { useRedisServer } from "../support/own-server";
import { uniqueId } from "../support/redis";
import { firstAfterRelease, watchTries } from "../wake/support/covered";

const { server, connect } = useRedisServer();
/** Accepts connections and never answers: a connect that hangs after the TCP handshake. */
let blackHole: Server;
let blackHolePort: number;
const blackHoleSockets = new Set<Socket>();
/** A port nothing listens on: a connect that fails. */
let closedPort: number;
const closers: (() => unknown)[] = [];

beforeAll(async () => {
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

/**
 * A wait of `attempts` tries 50 ms apart on a lock held throughout, on a client with wake-ups
 * enabled: polling that long costs more than subscribing, so it subscribes. It ends with its tries
 * (not a timeout: see the last test of this file). Resolves with whether it acquired and how many
 * connections to the black hole were open as it ended.
 */
async function waitOnHeldLock(redis: object, attempts: number): Promise<{ acquired: boolean; hung: number }> {
  const id = uniqueId("feed");
  const direct = connect();
  const holder = new Lock({ id, redis: direct, lease: 10_000 });
  await holder.acquireOrThrow();
  const waiter = new Lock({ id, redis: redis as never, retry: { attempts, delay: 50 } });
  const acquired = await waiter.acquire();
  // Read before anything else awaits: a connection the wait closed as it ended is seen closing later.
  const hung = blackHoleSockets.size;
  await holder.release();
  return { acquired, hung };
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
        return connect().on("error", () => {});
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
        const client = createClient({ url: server().url });
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
    enableWakeUps(redis as never);
    // 16 tries 50 ms apart: about 750 ms of polling, whatever the subscription does. Bounded as a hang
    // is (the subscription never comes), not timed: a loaded machine stretches the polling.
    const wait = await within(
      waitOnHeldLock(redis, 16),
      10_000,
      "the wait beside a hung subscriber connection",
    );
    expect(wait.acquired).toBe(false);
    // It ended with its tries while the subscription still hung: it never waited for it (a connect timeout
    // would have closed the connection first).
    expect(wait.hung).toBe(1);
    expect(redis.duplicates).toBe(1);
    await waitUntil(() => blackHoleSockets.size === 0, "the hung connection to be closed");
  });

  it("a subscriber connection that fails: not reused; the next wait connects afresh", async () => {
    const redis = withDuplicate(await kind.base(), kind.failing);
    enableWakeUps(redis as never);
    expect((await waitOnHeldLock(redis, 12)).acquired).toBe(false);
    const afterFirst = redis.duplicates;
    expect(afterFirst).toBeGreaterThanOrEqual(1);
    expect((await waitOnHeldLock(redis, 12)).acquired).toBe(false);
    expect(redis.duplicates).toBeGreaterThan(afterFirst);
  });

  // Found here: a wait whose subscription failed subscribed again after every poll, opening a
  // connection and spending an attempt each time.
  it("a subscriber connection that fails: the wait polls on without connecting again", async () => {
    const redis = withDuplicate(await kind.base(), kind.failing);
    enableWakeUps(redis as never);
    expect((await waitOnHeldLock(redis, 12)).acquired).toBe(false);
    expect(redis.duplicates).toBe(1);
  });
});

// Found by a review: the subscriber duplicate inherits the fast-failure settings docs/guarantees.md gives
// (no offline queue, lazy connect), and ioredis refused its SUBSCRIBE before it connected: no wait was ever
// woken, each only polled.
describe("ioredis set up for fast failure (`enableOfflineQueue: false`, `lazyConnect: true`)", () => {
  it("a wait subscribes, and the release wakes it before its next poll", async () => {
    const redis = connect({ enableOfflineQueue: false, lazyConnect: true });
    redis.on("error", () => {});
    await redis.connect();
    const id = uniqueId("fast-failure-feed");
    const holder = new Lock({ id, redis, lease: 60_000 });
    await holder.acquireOrThrow();
    enableWakeUps(redis);
    const tries = watchTries(redis, (await eventChannel(id)) as string);
    // Polls every second until subscribed; once subscribed, it sends the poll covering the moments before at
    // once, then polls only every 20 s (`maxDelay`; a 60 s timeout leaves it whole): only the announcement can
    // hand it the lock released in between. A SUBSCRIBE refused before the connection is up never covers it.
    const waiter = new Lock({ id, redis, retry: { delay: 1_000, maxDelay: 20_000 } });
    const stop = new AbortController();
    const waiting = waiter.acquire({ timeout: 60_000, signal: stop.signal }).catch(() => false);
    try {
      await tries.covered("the poll covering the subscription");
      tries.stop();
      expect(await holder.release()).toBe(true);
      expect(await firstAfterRelease(waiting)).toBe("acquired");
    } finally {
      tries.stop();
      stop.abort(); // a wait not woken ends here, not at its next poll
      await waiting;
    }
    expect(await waiter.release()).toBe(true);
  });
});

// Found here, where the waits above ended with a timeout: the last try before the timeout may get
// no answer in the time left, and the acquire then ended one way or the other at random.
describe("a wait that ends on its timeout", () => {
  /**
   * A client whose first try finds the lock held after a 40 ms round trip and whose later tries never
   * answer; sending one takes 5 ms. The timeout cuts the silent try off within a few of those round trips:
   * out of time, not an outage (one unanswered for longer is: test/errors/outage.test.ts).
   */
  const heldThenSilent = () => {
    let calls = 0;
    return {
      eval(): Promise<unknown> {
        calls += 1;
        if (calls === 1) return new Promise((resolve) => setTimeout(() => resolve([0, 10_000]), 40));
        // Synchronous work while sending (serialising, logging): the event loop's clock lags behind.
        const busyUntil = performance.now() + 5;
        while (performance.now() < busyUntil) {}
        return new Promise(() => {});
      },
    };
  };

  // Found here: a try cut short by the timeout ended as "no-reply" (a LockRedisError) when Node's
  // timer fired before performance.now() reached the budget's end.
  it("returns false, as the last answered try found the lock held, not a Redis error", async () => {
    for (let run = 0; run < 20; run++) {
      const lock = new Lock({
        id: uniqueId("timeout-silent"),
        redis: heldThenSilent(),
        retry: { delay: 20 },
      });
      // 250 ms: the first answer (40 ms) lands in time even when a loaded machine stalls the event loop.
      await expect(lock.acquire({ timeout: 250 })).resolves.toBe(false);
    }
  });
});
