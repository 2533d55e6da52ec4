import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RedisClusterHandle, startRedisCluster } from "../../stack/redis-cluster";
import { type RedisServerHandle, startRedisServer } from "../../stack/redis-server";

// The README's per-client examples, run against real servers this file starts (so that it never
// depends on a Redis it does not own).
let single: RedisServerHandle;
let quorum: RedisServerHandle[] = [];
let cluster: RedisClusterHandle;

beforeAll(async () => {
  [single, cluster, ...quorum] = await Promise.all([
    startRedisServer(),
    startRedisCluster(),
    startRedisServer(),
    startRedisServer(),
    startRedisServer(),
  ] as const);
}, 60_000);

afterAll(async () => {
  await Promise.all([single?.stop(), cluster?.stop(), ...quorum.map((server) => server.stop())]);
});

describe("README client examples", () => {
  it("ioredis", async () => {
    const { nightlyReport } = await import("../../examples/ioredis");
    expect(await nightlyReport(single.url)).toBe("report written");
  });

  it("node-redis", async () => {
    const { nightlyReport } = await import("../../examples/node-redis");
    expect(await nightlyReport(single.url)).toBe("report written");
  });

  it("Redis Cluster (ioredis Cluster)", async () => {
    const { nightlyReport } = await import("../../examples/cluster");
    expect(await nightlyReport(cluster.nodes.map(({ host, port }) => ({ host, port })))).toBe(
      "report written",
    );
  });

  it("quorum of three independent servers", async () => {
    const { nightlyReport } = await import("../../examples/quorum");
    const urls = quorum.map((server) => server.url) as [string, string, string];
    expect(await nightlyReport(urls)).toBe("report written");
  });
});
