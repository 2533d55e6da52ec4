import { Lock as LockV02 } from "@upstash/lock-0.2.1";
import { describe, expect, it } from "vitest";
import { Lock } from "../../src/index";
import { newRedis, uniqueId } from "../support/redis";

// The published 0.2.1, installed under an npm alias, on the same Redis as this version.
const redis = newRedis();
const rawRedis = newRedis({ automaticDeserialization: false });

describe("0.2.1 and 0.3 on the same key", () => {
  it("a 0.2.1 holder blocks a 0.3 acquire", async () => {
    const id = uniqueId("compat-old-holds");
    const old = new LockV02({ id, redis, retry: { attempts: 1, delay: 10 } });
    expect(await old.acquire()).toBe(true);
    const current = new Lock({ id, redis, retry: { attempts: 1 } });
    expect(await current.acquire()).toBe(false);
    expect(await old.release()).toBe(true);
    expect(await current.acquire()).toBe(true);
    await current.release();
  });

  it("a 0.3 holder blocks a 0.2.1 acquire, and 0.2.1 sees the same key and value layout", async () => {
    const id = uniqueId("compat-new-holds");
    const uuid = crypto.randomUUID();
    const current = new Lock({ id, redis });
    expect(await current.acquire({ uuid })).toBe(true);
    expect(await rawRedis.get(id)).toBe(uuid);
    const old = new LockV02({ id, redis, retry: { attempts: 1, delay: 10 } });
    expect(await old.acquire()).toBe(false);
    expect(await current.release()).toBe(true);
    expect(await old.acquire()).toBe(true);
    expect(await old.release()).toBe(true);
  });

  it("a 0.3 Lock seeded with a 0.2.1 holder's uuid reads, extends and releases it", async () => {
    const id = uniqueId("compat-seeded");
    const uuid = crypto.randomUUID();
    const old = new LockV02({ id, redis, lease: 5_000 });
    expect(await old.acquire({ uuid })).toBe(true);

    const current = new Lock({ id, redis, uuid });
    expect(await current.getStatus()).toBe("ACQUIRED");
    expect(await current.extend(1_500)).toBe(true);
    expect(await current.release()).toBe(true);
    expect(await redis.exists(id)).toBe(0);
    expect(await old.getStatus()).toBe("FREE");
  });
});
