// Review helper-136 (stop 50, 24/24 runs: Lock and FairLock, over @upstash/redis and ioredis, the lease run
// out or Redis restarted): an instance whose `acquire({ uuid })` lease was lost replaced it with a seed of the
// uuid, which acts on any hold of it. Another process had taken the uuid again (a re-run of the same job):
// the first instance's `release()` deleted that newer hold, and a third process took the lock while the
// second still held it. A lease released by its holder ends only its own hold; only a lock seeded with a
// uuid (`new Lock({ uuid })`) acts on any hold of it.
import { Redis as IoRedis } from "ioredis";
import { afterAll, describe, expect, it } from "vitest";
import { FairLock, Lock, type RedisClient } from "../../src/index";
import { uniqueId } from "../support/redis";
import { clientFor, usePrivateStack } from "./support/endpoints";
import { pause } from "./support/time";

const stack = usePrivateStack();
const opened: IoRedis[] = [];
afterAll(() => {
  for (const client of opened) client.disconnect();
});
const clients: Record<"ioredis" | "upstash", () => RedisClient> = {
  ioredis: () => {
    const client = new IoRedis(stack().redis.url);
    client.on("error", () => {});
    opened.push(client);
    return client;
  },
  upstash: () => clientFor(stack().endpoint),
};

describe.each(["ioredis", "upstash"] as const)("%s", (name) => {
  describe.each([
    ["Lock", Lock],
    ["FairLock", FairLock],
  ] as const)("%s", (_kind, Kind) => {
    it.each(["its lease ran out", "Redis restarted without persistence"] as const)(
      "once its lease of a uuid was lost (%s), its release leaves another process's newer hold of it alone",
      async (how) => {
        const id = uniqueId("lost-uuid-release");
        const uuid = crypto.randomUUID();
        const first = new Kind({ id, redis: clients[name](), lease: 1_000 });
        expect(await first.acquire({ uuid })).toBe(true);
        if (how === "its lease ran out") await pause(1_200);
        else await stack().redis.restart();
        const rerun = new Kind({ id, redis: clients[name](), lease: 10_000 });
        expect(await rerun.acquire({ uuid, timeout: 3_000 })).toBe(true);
        await pause(1_100); // the first lease's local deadline surely passed
        expect(first.signal.aborted).toBe(true);
        const released = await first.release();
        const third = await new Lock({ id, redis: clients[name](), retry: { attempts: 1 } }).acquire();
        const rerunHolds = await rerun.getStatus();
        await rerun.release();
        expect({ released, third, rerunHolds }).toEqual({
          released: false,
          third: false,
          rerunHolds: "ACQUIRED",
        });
      },
      20_000,
    );
  });
});
