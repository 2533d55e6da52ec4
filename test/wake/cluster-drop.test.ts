// Wake-ups on a cluster client whose subscriber connection drops. The library used to subscribe on a
// duplicate of the cluster client, whose own subscriber reconnects and resubscribes in silence (ioredis:
// no "close", no "error"; node-redis: only "node-error"): a release announced in that gap was lost while the
// wait believed itself covered, so it slept until its safety poll (8 s here). It now subscribes on a
// duplicate of a primary's connection, whose drop it hears: the wait retries at once.
import { Cluster, Redis as IoRedis } from "ioredis";
import { createCluster } from "redis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { enableWakeUps, Lock } from "../../src/index";
import { eventChannel } from "../../src/keys";
import { feedFor } from "../../src/wake/feeds";
import { type RedisClusterHandle, startRedisCluster } from "../../stack/redis-cluster";
import { pause, waitUntil, within } from "../faults/support/time";
import { uniqueId } from "../support/redis";

let cluster: RedisClusterHandle;
let admins: IoRedis[] = [];
const closers: (() => unknown)[] = [];

beforeAll(async () => {
  cluster = await startRedisCluster();
  admins = cluster.nodes.map((node) => new IoRedis(node.port, node.host));
}, 60_000);

afterAll(async () => {
  for (const close of closers) await close();
  for (const admin of admins) admin.disconnect();
  await cluster?.stop();
});

const newCluster = () => {
  const client = new Cluster([...cluster.nodes], { redisOptions: { protocol: 2 } });
  client.on("error", () => {});
  closers.push(() => client.disconnect());
  return client;
};

const newNodeRedisCluster = async () => {
  const client = createCluster({ rootNodes: cluster.urls.map((url) => ({ url })) });
  client.on("error", () => {});
  await client.connect();
  closers.push(() => client.destroy());
  return client;
};

describe.each([
  ["ioredis Cluster", async () => newCluster()],
  ["node-redis cluster", newNodeRedisCluster],
] as const)("%s wake-ups: the subscriber's connection drops", (_name, makeWaiterClient) => {
  it("a release announced as it drops still ends the wait soon, and later waits subscribe again", async () => {
    const id = uniqueId("cluster-drop");
    const channel = (await eventChannel(id)) as string;
    const subscribed = async () =>
      (await Promise.all(admins.map((admin) => admin.pubsub("NUMSUB", channel)))).reduce(
        (total: number, reply) => total + Number((reply as [string, number])[1]),
        0,
      );
    const holder = new Lock({ id, redis: newCluster(), lease: 30_000 });
    expect(await holder.acquire()).toBe(true);
    const waiterClient = (await makeWaiterClient()) as Cluster;
    enableWakeUps(waiterClient);
    const retry = { attempts: 1_000, delay: 100, maxDelay: 8_000 };
    const waiter = new Lock({ id, redis: waiterClient, lease: 30_000, retry });
    const waiting = waiter.acquire();
    await waitUntil(
      async () => (await subscribed()) === 1 && feedFor(waiterClient)?.active(channel) === true,
      "the waiter subscribed",
    );
    await pause(500); // its tries are covered: its next poll is a safety poll, 8 s after the last try

    // Every node drops its pubsub clients (a network blip); on the key's owner the release (what the release
    // script does: DEL, then PUBLISH) lands right after, all sent in this one tick.
    const owner = (await Promise.all(admins.map((admin) => admin.exists(id).catch(() => 0)))).indexOf(1);
    expect(owner).toBeGreaterThanOrEqual(0);
    const sent = admins.map((admin, index) => {
      const pipeline = admin.pipeline().call("CLIENT", "KILL", "TYPE", "pubsub");
      if (index === owner) pipeline.del(id).publish(channel, "released");
      return pipeline.exec();
    });
    const releasedAt = performance.now();
    await Promise.all(sent);
    expect(await within(waiting, 15_000, "the waiter")).toBe(true);
    // Polling every 100 ms finds the lock free within ~100 ms; the safety poll was 8 s away.
    expect(performance.now() - releasedAt).toBeLessThan(2_500);

    // The next wait on the client subscribes on a fresh connection, and is woken by the release.
    const second = new Lock({ id, redis: waiterClient, lease: 30_000, retry });
    const next = second.acquire();
    await waitUntil(() => feedFor(waiterClient)?.active(channel) === true, "the next wait subscribed");
    await pause(500);
    const secondReleaseAt = performance.now();
    expect(await waiter.release()).toBe(true);
    expect(await within(next, 15_000, "the next waiter")).toBe(true);
    expect(performance.now() - secondReleaseAt).toBeLessThan(2_500);
    expect(await second.release()).toBe(true);
  }, 40_000);
});
