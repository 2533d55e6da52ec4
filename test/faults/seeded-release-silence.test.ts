// Review helper-126 (stop 49, 10/10 over @upstash/redis and ioredis): a lock seeded with another process's
// uuid (`new Lock({ uuid, lease: 1_000 })`) released it with Redis frozen. Past its own 1 s lease, release()
// answered false, "not held by this token", as if the key had surely expired; the holder's lease was 30 s,
// and the request, landing after the thaw, deleted that hold. This process never saw the holder's lease:
// an unanswered release of a lease never confirmed here is Redis's silence, and says so.
import { Redis as IoRedis } from "ioredis";
import { afterAll, describe, expect, it } from "vitest";
import { Lock, LockRedisError, type RedisClient } from "../../src/index";
import { uniqueId } from "../support/redis";
import { clientFor, usePrivateStack } from "./support/endpoints";
import { pause } from "./support/time";
import { trackUnhandledRejections } from "./support/unhandled";

const unhandled = trackUnhandledRejections();
const stack = usePrivateStack();
const opened: IoRedis[] = [];
afterAll(() => {
  for (const client of opened) client.disconnect();
});
const connect = (kind: "upstash" | "ioredis"): RedisClient => {
  if (kind === "upstash") return clientFor(stack().endpoint);
  const client = new IoRedis(stack().redis.url, { maxRetriesPerRequest: null });
  opened.push(client);
  return client;
};

describe.each(["upstash", "ioredis"] as const)("%s", (kind) => {
  it("an unanswered release of a seeded uuid never confirmed here throws, and a retry tells what it did", async () => {
    const id = uniqueId("seeded-release-silence");
    const uuid = crypto.randomUUID();
    const owner = new Lock({ id, redis: connect(kind), lease: 30_000 });
    expect(await owner.acquire({ uuid })).toBe(true);
    const seeded = new Lock({ id, redis: connect(kind), uuid, lease: 1_000 });
    const { redis } = stack();
    redis.freeze();
    const answer = await seeded.release().then(String, (error: unknown) => error);
    await pause(300);
    redis.thaw();
    await seeded.pending;
    const again = await seeded.release(); // the first one landed after the thaw, and freed the key
    expect({
      silence: answer instanceof LockRedisError && /did not answer/.test(answer.message),
      again,
      unhandled: unhandled(),
    }).toEqual({ silence: true, again: false, unhandled: [] });
    await owner.release().catch(() => false);
  }, 20_000);
});
