// A same-token acquire that waits for the token's release in flight (its gate), then for the instance's turn
// (review helper-27): the turn passed a few microtasks after the answer the gate waits for, so the try after
// the gate met the releasing lease's turn and spent an attempt. The turn now passes in the same tick.
import { describe, expect, it } from "vitest";
import { Lock } from "../../src/index";
import { uniqueId } from "../support/redis";
import { sharedEndpoint, useWire } from "./support/endpoints";
import { waitUntil, within } from "./support/time";

const wire = useWire(() => sharedEndpoint());

describe("same-uuid acquire while that uuid's release is in flight on a shared Lock", () => {
  it("takes the lock once the release is answered (2 attempts: one wait, one try)", async () => {
    const id = uniqueId("uuid-turn");
    const uuid = crypto.randomUUID();
    const lock = new Lock({ id, redis: wire().faulty, lease: 5_000 });
    expect(await lock.acquire({ uuid })).toBe(true);
    wire().passThrough.faults.delayRepliesNext(1, 300);
    const sent = wire().requests();
    const releasing = lock.release();
    // Counted from once the release reached the wire (on a busy machine it may take longer than a pause).
    await waitUntil(() => wire().requests() > sent, "the release to reach the wire");
    const before = wire().requests();
    const b = lock.acquire({ uuid, retry: { attempts: 2, delay: 2_000 } });
    expect(await releasing).toBe(true);
    const bGot = await within(b, 5_000, "B's acquire");
    const requests = wire().requests() - before;
    await lock.release().catch(() => false);
    expect({ bGot, requests }).toEqual({ bGot: true, requests: 1 });
  });
});

// Review helper-139 (stop 50, by reading): once the release it waited for was answered, a same-uuid caller's
// own try, cut off by its timeout, was told "a release, renewal or extend of this uuid here was still
// unanswered": false (it was answered), and `timeout`, as if the lock had been held, where nothing
// contended. Its own try's silence is its failure, as for a caller that never waited.
describe("same-uuid acquire whose own try goes unanswered after the release it waited for", () => {
  it("fails as Redis's silence, not as an unanswered release", async () => {
    const id = uniqueId("uuid-turn-silent");
    const uuid = crypto.randomUUID();
    const lock = new Lock({ id, redis: wire().faulty, lease: 5_000 });
    expect(await lock.acquire({ uuid })).toBe(true);
    const { faults } = wire().passThrough;
    faults.delayRepliesNext(1, 300);
    const sent = wire().requests();
    const releasing = lock.release();
    await waitUntil(() => wire().requests() > sent, "the release to reach the wire");
    faults.latency(3_000); // what comes after the release: the caller's own try
    const failure = await lock.acquireOrThrow({ uuid, timeout: 800 }).catch((error: Error) => error);
    expect(await releasing).toBe(true);
    faults.reset();
    await lock.pending;
    expect(failure).toMatchObject({ reason: "redis-error", cause: { operation: "acquire" } });
    expect((failure as Error).message).toMatch(/Redis did not answer \(no reply within \d+ ms\)$/);
  });
});
