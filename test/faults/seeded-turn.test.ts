// "One instance, one lease": a second acquire() on an instance that holds waits locally, sends nothing, and
// fails naming "another caller of this instance" (review helper-23). A Lock seeded with a uuid holds once
// getStatus() says ACQUIRED (signal live, remainingMs > 0); that hold took no turn: a later acquire() on the
// same instance went to Redis, met its own instance's token, and reported another owner.
import { describe, expect, it } from "vitest";
import { Lock, LockAcquisitionError } from "../../src/index";
import { uniqueId } from "../support/redis";
import { sharedEndpoint, useWire } from "./support/endpoints";

const wire = useWire(() => sharedEndpoint());

describe("a seeded Lock that holds, then acquire() on the same instance", () => {
  it("waits for its own hold locally (no request) and says so", async () => {
    const id = uniqueId("seeded-turn");
    const uuid = crypto.randomUUID();
    expect(await new Lock({ id, redis: wire().direct, lease: 5_000 }).acquire({ uuid })).toBe(true);
    const lock = new Lock({ id, redis: wire().faulty, uuid, lease: 5_000 });
    expect(await lock.getStatus()).toBe("ACQUIRED");
    expect(lock.signal.aborted).toBe(false); // this instance holds
    expect(lock.remainingMs).toBeGreaterThan(0);
    const before = wire().requests();
    const error = await lock.acquireOrThrow({ retry: { attempts: 2, delay: 50 } }).catch((e: unknown) => e);
    const requests = wire().requests() - before;
    await lock.release();
    expect(error).toBeInstanceOf(LockAcquisitionError);
    expect({ requests, message: (error as Error).message.replace(/after .* ms: /, "") }).toEqual({
      requests: 0,
      message: `Could not acquire lock ${JSON.stringify(id)} another caller of this instance held it or was acquiring it`,
    });
  });
});
