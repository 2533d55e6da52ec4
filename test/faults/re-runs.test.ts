// A request whose reply was lost is re-sent by the client, and may run again much later: after the
// lease ran out and another owner took the key. A re-run must never report this token as holding a
// key that holds another token, nor touch the other owner's lock.
import { Redis } from "@upstash/redis";
import { describe, expect, it } from "vitest";
import { Lock } from "../../src/index";
import { uniqueId } from "../support/redis";
import { sharedEndpoint, useWire } from "./support/endpoints";
import { pause } from "./support/time";
import { trackUnhandledRejections } from "./support/unhandled";

const wire = useWire(sharedEndpoint);
const unhandled = trackUnhandledRejections();

/**
 * A client that re-sends a request every 250 ms when its reply is lost, up to 5 times: the first
 * three sends of the call under test run on the server but their replies are dropped.
 */
function retryingClient(): Redis {
  return new Redis({
    url: wire().passThrough.url,
    token: sharedEndpoint().token,
    enableTelemetry: false,
    retry: { retries: 5, backoff: () => 250 },
  });
}

/** Another owner takes `id` as soon as it is free, within `withinMs`. */
async function takeOverWhenFree(id: string, withinMs: number): Promise<Lock> {
  const other = new Lock({ id, redis: wire().direct, lease: 30_000, wakeOnRelease: false });
  const taken = await other.acquire({ timeout: withinMs, retry: { delay: 20 } });
  if (!taken) throw new Error("the other owner could not take the key");
  return other;
}

describe("a re-sent extend after a takeover", () => {
  it("answers false, and the hold reports the loss instead of adopting the new owner's lease", async () => {
    const id = uniqueId("rerun-extend");
    const lock = new Lock({ id, redis: retryingClient(), lease: 300 });
    expect(await lock.acquire()).toBe(true);
    const signal = lock.signal;
    // The first send extends by 100 ms and sets its receipt; its reply and the next two are lost.
    // By the fourth send (750 ms later) the 400 ms lease has run out and another owner holds the key.
    wire().passThrough.faults.dropReplies(3);
    const extending = lock.extend(100);
    const other = await takeOverWhenFree(id, 2_000);
    expect(await extending).toBe(false);
    // Lost: by its local deadline ("expired") or by this answer ("taken"); either way not held.
    expect(signal.aborted).toBe(true);
    expect(lock.remainingMs).toBe(0);
    expect(lock.signal.aborted).toBe(true);
    expect(await lock.getStatus()).toBe("FREE");
    expect(await other.getStatus()).toBe("ACQUIRED");
    // The other owner's lease was not touched by the re-run.
    expect(await wire().direct.pttl(id)).toBeGreaterThan(25_000);
    await other.release();
    expect(unhandled()).toEqual([]);
  });

  it("a re-run before any takeover still answers true and adds the amount once", async () => {
    const id = uniqueId("rerun-extend-held");
    const lock = new Lock({ id, redis: retryingClient(), lease: 5_000 });
    expect(await lock.acquire()).toBe(true);
    await lock.extend(1); // the script is cached: the dropped sends below are all EVALSHA
    wire().passThrough.faults.dropReplies(2);
    expect(await lock.extend(10_000)).toBe(true);
    const pttl = await wire().direct.pttl(id);
    expect(pttl).toBeGreaterThan(15_000 - 2_000);
    expect(pttl).toBeLessThanOrEqual(15_001);
    await lock.release();
  });
});

describe("a re-sent release after a takeover", () => {
  it("leaves the new owner's lock alone", async () => {
    const id = uniqueId("rerun-release");
    const lock = new Lock({ id, redis: retryingClient(), lease: 10_000 });
    expect(await lock.acquire()).toBe(true);
    await lock.extend(1);
    // The first send deletes the key; its reply and the next two are lost; meanwhile another owner
    // takes the key, and the fourth send arrives.
    wire().passThrough.faults.dropReplies(3);
    const releasing = lock.release();
    const other = await takeOverWhenFree(id, 2_000);
    // "This call deleted the lock" is true: the first run did. What matters is the new owner's key.
    expect(await releasing).toBe(true);
    await pause(50);
    expect(await other.getStatus()).toBe("ACQUIRED");
    expect(await wire().direct.pttl(id)).toBeGreaterThan(25_000);
    await other.release();
  });
});
