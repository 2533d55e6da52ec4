// A covered wait whose try erred used to wait for its safety poll (`SubscribedWaiter.next` ignored the
// step's kind): when the release had woken that try, the announcement was spent, and one transient error
// reply (a blip on the command connection, the subscriber fine) left the lock free for `retry.maxDelay`
// (5 s here), where polling retries after `retry.delay`. Bounds are far from both: 2.5 s.
import { connect, createServer, type Server, type Socket } from "node:net";
import { Redis as IoRedis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { enableWakeUps, Lock } from "../../src/index";
import { eventChannel } from "../../src/keys";
import { feedFor } from "../../src/wake/feeds";
import { type RedisServerHandle, startRedisServer } from "../../stack/redis-server";
import { waitUntil, within } from "../faults/support/time";
import { uniqueId } from "../support/redis";

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

let server: RedisServerHandle;
/** A relay to the server that, when armed, answers the next EVALSHA with a transient error itself. */
let relay: Server;
let relayPort: number;
let armed = false;
let injected = 0;
const sockets: Socket[] = [];
const clients: IoRedis[] = [];

beforeAll(async () => {
  server = await startRedisServer();
  relay = createServer((client) => {
    const upstream = connect(server.port, "127.0.0.1");
    sockets.push(client, upstream);
    client.on("data", (data: Buffer) => {
      if (armed && data.toString("latin1").toLowerCase().includes("evalsha")) {
        armed = false;
        injected += 1;
        client.write("-TRYAGAIN injected transient error\r\n");
        return;
      }
      upstream.write(data);
    });
    upstream.on("data", (data: Buffer) => client.write(data));
    for (const socket of [client, upstream]) socket.on("error", () => {});
    client.on("close", () => upstream.destroy());
    upstream.on("close", () => client.destroy());
  });
  await new Promise<void>((resolve) => relay.listen(0, "127.0.0.1", resolve));
  relayPort = (relay.address() as { port: number }).port;
});

afterAll(async () => {
  for (const client of clients) client.disconnect();
  for (const socket of sockets) socket.destroy();
  await new Promise((resolve) => relay.close(resolve));
  await server.stop();
});

const io = (port: number) => {
  const client = new IoRedis(port, "127.0.0.1");
  client.on("error", () => {});
  clients.push(client);
  return client;
};

const RETRY = { attempts: 500, delay: 100, maxDelay: 5_000 } as const;

/** Holds `id`, starts a wait, releases once it is settled, failing the waiter's next try once. */
async function releaseWithOneFailedTry(wakeOnRelease: boolean): Promise<{ acquired: boolean; ms: number }> {
  const id = uniqueId("error-after-wake");
  const channel = (await eventChannel(id)) as string;
  const holder = new Lock({ id, redis: io(server.port), lease: 30_000 });
  expect(await holder.acquire()).toBe(true);
  const waiterRedis = io(relayPort);
  enableWakeUps(waiterRedis);
  const waiter = new Lock({ id, redis: waiterRedis, lease: 30_000, wakeOnRelease, retry: RETRY });
  await waiter.acquire({ retry: { attempts: 1 } }); // warm: the script is cached, EVALSHA from now on
  const waiting = waiter.acquire();
  if (wakeOnRelease) await waitUntil(() => feedFor(waiterRedis)?.active(channel) === true, "subscribed");
  await pause(1_200); // covered for a while: with wake-ups its next try is a safety poll ~5 s away
  const before = injected;
  armed = true;
  const releasedAt = performance.now();
  expect(await holder.release()).toBe(true);
  const acquired = await within(waiting, 15_000, "the waiter");
  const ms = Math.round(performance.now() - releasedAt);
  armed = false;
  expect(injected).toBe(before + 1); // one try after the release failed
  if (acquired) await waiter.release();
  return { acquired, ms };
}

describe("a wait whose woken try meets a transient error", () => {
  it("retries as polling would, not at its safety poll", async () => {
    const polling = await releaseWithOneFailedTry(false);
    const wakeUps = await releaseWithOneFailedTry(true);
    expect(polling.acquired).toBe(true);
    expect(polling.ms).toBeLessThan(2_500);
    expect(wakeUps).toEqual({ acquired: true, ms: expect.any(Number) });
    expect({ wokenPromptly: wakeUps.ms < 2_500, ms: wakeUps.ms }).toEqual({
      wokenPromptly: true,
      ms: expect.any(Number),
    });
  }, 40_000);
});
