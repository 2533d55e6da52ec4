import { beforeAll, beforeEach, describe, expect, it } from "vitest";
import { newRedis, uniqueId } from "../support/redis";
import { useUpstashEnv } from "./support/upstash-env";

// examples/background-job.ts against the suite's server: a real queue (a Redis list), real locks.
useUpstashEnv();
const redis = newRedis();
let example: typeof import("../../examples/background-job");

beforeAll(async () => {
  example = await import("../../examples/background-job");
});

beforeEach(async () => {
  await redis.del(example.QUEUE, example.RETRY_QUEUE);
});

describe("examples/background-job.ts", () => {
  it("applies each change under its account's lock, defers a busy account, and leaves no lock behind", async () => {
    const [a, b, busy] = [uniqueId("account"), uniqueId("account"), uniqueId("account")];
    await redis.set(`account:${busy}`, "another-worker", { px: 10_000 });
    const messages = [
      { accountId: a, change: "rename" },
      { accountId: busy, change: "close" },
      { accountId: b, change: "upgrade" },
      { accountId: a, change: "downgrade" },
    ];
    await redis.rpush(example.QUEUE, ...messages);
    const seen: { change: string; locked: number; aborted: boolean }[] = [];
    example.work.applyChange = async (message, signal) => {
      seen.push({
        change: message.change,
        locked: await redis.exists(`account:${message.accountId}`),
        aborted: signal.aborted,
      });
    };

    expect(await example.drainAccountChanges()).toEqual({ applied: 3, deferred: 1 });
    expect(seen).toEqual([
      { change: "rename", locked: 1, aborted: false },
      { change: "upgrade", locked: 1, aborted: false },
      { change: "downgrade", locked: 1, aborted: false },
    ]);
    expect(await redis.lrange(example.RETRY_QUEUE, 0, -1)).toEqual([messages[1]]);
    expect(await redis.exists(`account:${a}`, `account:${b}`)).toBe(0);
    expect(await redis.get(`account:${busy}`)).toBe("another-worker");
    await redis.del(`account:${busy}`);
  });

  it("releases the lock when a change throws, and stops with that error", async () => {
    const accountId = uniqueId("account");
    await redis.rpush(example.QUEUE, { accountId, change: "explode" });
    const failure = new Error("change failed");
    example.work.applyChange = async () => {
      throw failure;
    };
    await expect(example.drainAccountChanges()).rejects.toBe(failure);
    expect(await redis.exists(`account:${accountId}`)).toBe(0);
  });

  it("returns at once on an empty queue", async () => {
    expect(await example.drainAccountChanges()).toEqual({ applied: 0, deferred: 0 });
  });
});
