// A same-token acquire waits for that token's release in flight before the instance's turn, and counts that
// wait as Redis's silence (review helper-27). Once the release was answered and another caller of the
// instance had the turn, the wait for that turn kept the silence clock: a lease later the acquisition threw
// "Redis did not answer" for a release Redis had answered long before.
import { describe, expect, it } from "vitest";
import { Lock } from "../../src/index";
import { uniqueId } from "../support/redis";
import { sharedEndpoint, useWire } from "./support/endpoints";
import { pause, waitUntil, within } from "./support/time";

const wire = useWire(() => sharedEndpoint());

describe("same-uuid acquire behind its release in flight, then behind another caller's turn", () => {
  it("keeps waiting for the turn (Redis answered the release), and gets the lock", async () => {
    const id = uniqueId("uuid-release-turn");
    const uuid = crypto.randomUUID();
    const lock = new Lock({ id, redis: wire().faulty, lease: 5_000 });
    expect(await lock.acquire({ uuid })).toBe(true); // A
    const { passThrough } = wire();
    const [sentBefore, ranBefore] = [passThrough.stats.requests, passThrough.ran()];
    const c = lock.acquire({ retry: { attempts: 100, delay: 50 } }); // C: waits for A's turn
    // The next request is the release: C sends nothing while A's turn lasts, which is until Redis answers
    // the release (no pause assumed that; checked below).
    passThrough.faults.delayRepliesNext(1, 300);
    let answered = false;
    const aReleased = lock.release().finally(() => {
      answered = true;
    });
    // The release ran in Redis, its reply held 300 ms (waited for, not assumed after a fixed 20 ms).
    await waitUntil(() => passThrough.ran() > ranBefore, "the release to run in Redis", { intervalMs: 1 });
    expect(passThrough.stats.requests - sentBefore).toBe(1); // the release alone: C sent nothing
    // B: the same uuid again, a 1 s lease, while the release is in flight.
    const b = lock.acquire({ uuid, lease: 1_000, retry: { attempts: 200, delay: 50 } }).then(
      (ok) => ok,
      (e: unknown) => (e instanceof Error ? e.message : String(e)),
    );
    expect(answered).toBe(false);
    expect(await aReleased).toBe(true);
    expect(await within(c, 5_000, "C's acquire")).toBe(true);
    await pause(1_800); // C works for 1.8 s, then releases
    expect(await lock.release()).toBe(true);
    const bResult = await within(b, 5_000, "B's acquire");
    await lock.release().catch(() => false);
    expect(bResult).toBe(true);
  });
});
