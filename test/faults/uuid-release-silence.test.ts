// A same-token acquire waits for that token's release in flight before the instance's turn, and counts that
// wait as Redis's silence (review helper-27). Once the release was answered and another caller of the
// instance had the turn, the wait for that turn kept the silence clock: a lease later the acquisition threw
// "Redis did not answer" for a release Redis had answered long before.
import { describe, expect, it } from "vitest";
import { Lock } from "../../src/index";
import { uniqueId } from "../support/redis";
import { sharedEndpoint, useWire } from "./support/endpoints";
import { pause, within } from "./support/time";

const wire = useWire(() => sharedEndpoint());

describe("same-uuid acquire behind its release in flight, then behind another caller's turn", () => {
  it("keeps waiting for the turn (Redis answered the release), and gets the lock", async () => {
    const id = uniqueId("uuid-release-turn");
    const uuid = crypto.randomUUID();
    const lock = new Lock({ id, redis: wire().faulty, lease: 5_000 });
    expect(await lock.acquire({ uuid })).toBe(true); // A
    const c = lock.acquire({ retry: { attempts: 100, delay: 50 } }); // C: waits for A's turn
    await pause(20);
    wire().passThrough.faults.delayRepliesNext(1, 300);
    const aReleased = lock.release();
    await pause(20);
    // B: the same uuid again, a 1 s lease.
    const b = lock.acquire({ uuid, lease: 1_000, retry: { attempts: 200, delay: 50 } }).then(
      (ok) => ok,
      (e: unknown) => (e instanceof Error ? e.message : String(e)),
    );
    expect(await aReleased).toBe(true);
    expect(await within(c, 5_000, "C's acquire")).toBe(true);
    await pause(1_800); // C works for 1.8 s, then releases
    expect(await lock.release()).toBe(true);
    const bResult = await within(b, 5_000, "B's acquire");
    await lock.release().catch(() => false);
    expect(bResult).toBe(true);
  });
});
