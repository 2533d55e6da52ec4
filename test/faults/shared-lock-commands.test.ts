// The common path stays one command per call (review helper-27): a plain Lock's acquire and release, also for
// a second caller of a shared instance, and a seeded Lock's getStatus().
import { describe, expect, it } from "vitest";
import { Lock } from "../../src/index";
import { uniqueId } from "../support/redis";
import { sharedEndpoint, useWire } from "./support/endpoints";
import { within } from "./support/time";

const wire = useWire(() => sharedEndpoint());

describe("request counts", () => {
  it("plain and shared acquire/release: one request each", async () => {
    const id = uniqueId("count");
    const lock = new Lock({ id, redis: wire().faulty, lease: 5_000 });
    await lock.acquire();
    await lock.release(); // warm the scripts
    const before = wire().requests();
    expect(await lock.acquire()).toBe(true);
    const b = lock.acquire({ retry: { attempts: 20, delay: 50 } });
    expect(await lock.release()).toBe(true);
    expect(await within(b, 5_000, "B")).toBe(true);
    expect(await lock.release()).toBe(true);
    await lock.pending;
    expect(wire().requests() - before).toBe(4);
  });

  it("seeded: getStatus() is one request, and its hold has the instance's turn until released", async () => {
    const id = uniqueId("count-seeded");
    const uuid = crypto.randomUUID();
    expect(await new Lock({ id, redis: wire().direct, lease: 10_000 }).acquire({ uuid })).toBe(true);
    const seeded = new Lock({ id, redis: wire().faulty, uuid, lease: 10_000 });
    const before = wire().requests();
    expect(await seeded.getStatus()).toBe("ACQUIRED");
    expect(wire().requests() - before).toBe(1);
    // Waits for the seeded turn, however long the release's answer takes on a busy machine.
    const other = seeded.acquire({ timeout: 5_000, retry: { delay: 20 } });
    expect(await seeded.release()).toBe(true);
    expect(await within(other, 5_000, "other")).toBe(true);
    await seeded.release();
  });
});
