// autoExtend's first renewal is timed from the acquire's send, as the deadline is (review helper-23): timed
// from the reply, an acquire whose reply came late (Redis frozen while the try was in flight, then resumed;
// or the reply slow on the wire) had its first renewal planned past the deadline: the lease was declared
// lost ("expired") with no renewal sent, though Redis answered all along and held the token.
import { describe, expect, it, vi } from "vitest";
import { Lock } from "../../src/index";
import { uniqueId } from "../support/redis";
import { releasedAfterTest } from "./support/cleanup";
import { clientFor, usePrivateStack, useWire } from "./support/endpoints";
import { pause } from "./support/time";

const stack = usePrivateStack();
const wire = useWire(() => stack().endpoint);

describe("autoExtend after an acquire whose reply came late", () => {
  it("SIGSTOP during the acquire, SIGCONT 2.2 s later (lease 3 s): renews instead of reporting the lease lost", async () => {
    const id = uniqueId("first-renewal-freeze");
    const redis = clientFor(stack().endpoint);
    const onLost = vi.fn();
    const lock = releasedAfterTest(new Lock({ id, redis, lease: 3_000, autoExtend: true, onLost }));
    stack().redis.freeze();
    const acquiring = lock.acquire({ retry: { attempts: 1 } });
    await pause(2_200);
    stack().redis.thaw();
    expect(await acquiring).toBe(true);
    // Redis is healthy from here on. Watch for 2 s: the lease should be renewed, not lost.
    await pause(2_000);
    const pttl = await redis.pttl(id);
    // Redis still holds the token (pttl > 0: the try ran at the thaw), yet the holder was told it lost it.
    expect({
      lost: onLost.mock.calls.map(([e]) => (e as { reason: string }).reason),
      aborted: lock.signal.aborted,
      heldInRedis: pttl > 0,
    }).toEqual({ lost: [], aborted: false, heldInRedis: true });
  });

  it("an acquire reply held 1.1 s on the wire (under half the lease: no warning), interval 2 s of a 3 s lease: renews instead of reporting the lease lost", async () => {
    const id = uniqueId("first-renewal-delay");
    const onLost = vi.fn();
    const lock = releasedAfterTest(
      new Lock({ id, redis: wire().faulty, lease: 3_000, autoExtend: { interval: 2_000 }, onLost }),
    );
    wire().passThrough.faults.delayRepliesNext(1, 1_100);
    const before = wire().requests();
    expect(await lock.acquire({ retry: { attempts: 1 } })).toBe(true);
    await pause(2_500);
    const renewalsBeforeLoss = wire().requests() - before - 1; // less the acquire itself
    expect({
      lost: onLost.mock.calls.map(([e]) => (e as { reason: string }).reason),
      renewalsSent: renewalsBeforeLoss > 0,
      heldInRedis: (await wire().direct.pttl(id)) > 0,
    }).toEqual({ lost: [], renewalsSent: true, heldInRedis: true });
  });
});
