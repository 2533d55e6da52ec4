// A covered wait whose try erred used to wait for its safety poll (`SubscribedWaiter.next` ignored the
// step's kind): when the release had woken that try, the announcement was spent, and one transient error
// reply (a blip on the command connection, the subscriber fine) left the lock free for `retry.maxDelay`
// (20 s here), where polling retries after `retry.delay`. Told apart by which comes first after the release:
// the acquisition, or a plain timer due long before that safety poll.
import { connect, createServer, type Server, type Socket } from "node:net";
import { Redis as IoRedis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { enableWakeUps, Lock } from "../../src/index";
import { eventChannel } from "../../src/keys";
import { waitUntil } from "../faults/support/time";
import { useRedisServer } from "../support/own-server";
import { uniqueId } from "../support/redis";
import { firstAfterRelease, watchTries } from "./support/covered";

const { server } = useRedisServer();
/** A relay to the server that, when armed, answers the next EVALSHA with a transient error itself. */
let relay: Server;
let relayPort: number;
let armed = false;
let injected = 0;
const sockets: Socket[] = [];
const clients: IoRedis[] = [];

beforeAll(async () => {
  relay = createServer((client) => {
    const upstream = connect(server().port, "127.0.0.1");
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
});

const io = (port: number) => {
  const client = new IoRedis(port, "127.0.0.1");
  client.on("error", () => {});
  clients.push(client);
  return client;
};

// Fixed, 100 ms apart; covered, a wait's safety polls go every maxDelay (20 s): the end of its 500 tries
// comes later, and the holder's 30 s lease ends later still.
const RETRY = { attempts: 500, delay: 100, maxDelay: 20_000 } as const;

/**
 * Holds `id`, starts a wait, releases once it is settled (with wake-ups: covered, its next try a safety poll
 * 20 s away), failing the waiter's next try once. Says which came first after the release: the waiter taking
 * the lock, or a plain timer due long before a retry at `retry.maxDelay` would take it.
 */
async function releaseWithOneFailedTry(
  wakeOnRelease: boolean,
): Promise<"acquired" | "failed" | "timer first"> {
  const id = uniqueId("error-after-wake");
  const channel = (await eventChannel(id)) as string;
  const holder = new Lock({ id, redis: io(server().port), lease: 30_000 });
  expect(await holder.acquire()).toBe(true);
  const waiterRedis = io(relayPort);
  enableWakeUps(waiterRedis);
  const waiter = new Lock({ id, redis: waiterRedis, lease: 30_000, wakeOnRelease, retry: RETRY });
  await waiter.acquire({ retry: { attempts: 1 } }); // warm: the script is cached, EVALSHA from now on
  const tries = watchTries(waiterRedis, channel);
  const stop = new AbortController();
  const waiting = waiter.acquire({ signal: stop.signal }).catch(() => false);
  try {
    // Covered (its covering poll answered, waited for rather than assumed after a fixed pause): from then on
    // only the release's announcement sends a try before the safety poll. Polling: under way, 100 ms apart.
    if (wakeOnRelease) await tries.covered("the poll covering the subscription");
    else await waitUntil(() => tries.sent() >= 2, "polling under way");
    tries.stop();
    const before = injected;
    armed = true;
    const releasing = holder.release();
    const first = await firstAfterRelease(waiting);
    expect(await releasing).toBe(true);
    armed = false;
    // One try failed: after the release with wake-ups (none goes before it); with polling, maybe the one
    // before it, which tells the same.
    expect(injected).toBe(before + 1);
    return first;
  } finally {
    tries.stop();
    armed = false;
    stop.abort(); // a wait that lost the race ends here, not at its safety poll
    if (await waiting) await waiter.release();
    await holder.release(); // after a failure (false when released above)
  }
}

describe("a wait whose woken try meets a transient error", () => {
  it("retries as polling would, not at its safety poll", async () => {
    // Polling retries after retry.delay, well before the timer: the race tells the two apart.
    expect(await releaseWithOneFailedTry(false)).toBe("acquired");
    expect(await releaseWithOneFailedTry(true)).toBe("acquired");
  }, 40_000);
});
