// Review helper-170 (stop 54), held up 8/8: the older leases a lease took its uuid's hold over from are told
// when its release fails (5xx, a frozen Redis with a client timeout), by release() and by `await using`.
import { Redis as IoRedis } from "ioredis";
import { describe, expect, it } from "vitest";
import { FairLock, Lock, type RedisClient } from "../../src/index";
import { uniqueId } from "../support/redis";
import { useBothClients } from "./support/both-clients";
import { useWire } from "./support/endpoints";
import { pause } from "./support/time";

const { stack } = useBothClients();
const wire = useWire(() => stack().endpoint);
const kinds = [
  ["Lock", Lock],
  ["FairLock", FairLock],
] as const;
const names = ["ioredis", "upstash"] as const;

describe.each(names)("%s", (name) => {
  describe.each(kinds)("%s", (_kind, Kind) => {
    it.each(["release", "dispose"])(
      "H: L2's %s fails: L1 is told",
      async (how) => {
        const id = uniqueId("failed-release-followers");
        const uuid = crypto.randomUUID();
        const lost: string[] = [];
        let redis: RedisClient;
        if (name === "upstash") redis = wire().faulty;
        else {
          const client = new IoRedis(stack().redis.url, { commandTimeout: 300 });
          client.on("error", () => {});
          redis = client;
        }
        const lock = new Kind({ id, redis, lease: 1_500 });
        expect(await lock.acquire({ uuid, onLost: (e) => lost.push(`L1 ${e.reason}`) })).toBe(true);
        const l1 = lock.signal;
        expect(await lock.acquire({ uuid })).toBe(true);
        if (name === "upstash") wire().passThrough.faults.status5xx(1);
        else stack().redis.freeze();
        let threw = false;
        try {
          if (how === "release") await lock.release().catch(() => (threw = true));
          else await lock[Symbol.asyncDispose]();
        } finally {
          stack().redis.thaw();
        }
        await pause(50);
        expect({ lost, aborted: l1.aborted, threw }).toEqual({
          lost: ["L1 taken"],
          aborted: true,
          threw: how === "release",
        });
        if (redis instanceof IoRedis) redis.disconnect();
      },
      20_000,
    );
  });
});
