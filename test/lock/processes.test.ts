import { describe, expect, inject, it } from "vitest";
import { Lock } from "../../src/index";
import { lastJsonLine, runTypeScript } from "../support/node-process";
import { newRedis, uniqueId } from "../support/redis";

const redis = newRedis();
const connection = { UPSTASH_URL: inject("upstashUrl"), UPSTASH_TOKEN: inject("upstashToken") };

describe("across real processes", () => {
  it("4 processes x 50 critical sections of read-modify-write: no lost update", async () => {
    const lockId = uniqueId("workers");
    const counterKey = `${lockId}:counter`;
    const workers = Array.from({ length: 4 }, () =>
      runTypeScript(new URL("./fixtures/counter-worker.ts", import.meta.url), {
        ...connection,
        LOCK_ID: lockId,
        COUNTER_KEY: counterKey,
        SECTIONS: "50",
      }),
    );
    const outputs = await Promise.all(workers);
    expect(outputs.map(({ stdout }) => lastJsonLine<{ done: number }>(stdout).done)).toEqual([
      50, 50, 50, 50,
    ]);
    expect(Number(await redis.get(counterKey))).toBe(200);
    expect(await redis.exists(lockId)).toBe(0);
    await redis.del(counterKey);
  }, 120_000);

  it("a second process seeded with the uuid releases the lock this process acquired", async () => {
    const id = uniqueId("cross-process");
    const uuid = crypto.randomUUID();
    const lock = new Lock({ id, redis });
    expect(await lock.acquire({ uuid })).toBe(true);

    const { stdout } = await runTypeScript(new URL("./fixtures/release-worker.ts", import.meta.url), {
      ...connection,
      LOCK_ID: id,
      LOCK_UUID: uuid,
    });
    expect(lastJsonLine(stdout)).toEqual({ status: "ACQUIRED", released: true });
    expect(await lock.getStatus()).toBe("FREE");
    expect(await redis.exists(id)).toBe(0);
  });
});
