// Review helper-152 (stop 52): node-redis's `socketTimeout` is an idle timeout, and the wake-up subscriber, a
// duplicate of the lock's client, inherited it. A subscribed connection is idle between announcements, so it
// timed out every `socketTimeout` ms, and the wait opened a new connection and sent a new SUBSCRIBE each time:
// a 4 s wait cost 10 connections, 10 SUBSCRIBEs and 21 tries, against 1, 1 and 3. The subscriber is made
// without it (it sends no command awaiting a reply once subscribed).
// The case fails 5 SUBSCRIBEs to 1 without the fix.
import { createClient } from "redis";
import { expect, it } from "vitest";
import { enableWakeUps, Lock } from "../../src/index";
import { pause } from "../faults/support/time";
import { useRedisServer } from "../support/own-server";
import { uniqueId } from "../support/redis";

const { server } = useRedisServer();

it("a node-redis client's socketTimeout does not end an idle wake-up subscription", async () => {
  // Pinged to stay open while idle itself (node-redis does not reconnect after a socket timeout).
  const client = createClient({ url: server().url, pingInterval: 100, socket: { socketTimeout: 300 } });
  client.on("error", () => {});
  await client.connect();
  try {
    enableWakeUps(client);
    const id = uniqueId("subscriber-socket-timeout");
    const holder = new Lock({ id, redis: client, lease: 60_000 });
    await holder.acquireOrThrow();
    const subscribes = async () =>
      Number(/cmdstat_subscribe:calls=(\d+)/.exec(String(await client.info("commandstats")))?.[1] ?? 0);
    const before = await subscribes();
    const waiter = new Lock({ id, redis: client, retry: { attempts: 1_000, delay: 100, maxDelay: 20_000 } });
    const waiting = waiter.acquire();
    await pause(1_500); // five of the client's socket timeouts
    await holder.release();
    expect(await waiting).toBe(true);
    expect(await subscribes()).toBe(before + 1);
    await waiter.release();
  } finally {
    await pause(300); // the subscription's linger
    client.destroy();
  }
}, 20_000);
