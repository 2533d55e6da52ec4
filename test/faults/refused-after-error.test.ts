// Review helper-218: a try answered "a later try of this uuid holds" ({0, -3}) is Redis's answer: an error an
// earlier try met is no longer the last word. Sent again at once, the next try cut off by the timeout ends
// the acquisition as a timeout (as after any "held"), not as the earlier error, an outage long over.
import { describe, expect, it } from "vitest";
import { Lock, LockAcquisitionError } from "../../src/index";
import { companionKey } from "../../src/keys";
import { uniqueId } from "../support/redis";
import { takerAhead } from "../support/taker-ahead";
import { clientFor, sharedEndpoint, useWire } from "./support/endpoints";

const wire = useWire(sharedEndpoint);
const LEASE_MS = 20_000;

describe("a try told a later try of its uuid holds, after a try that erred", () => {
  it("fails as a timeout when the try sent again is cut off, not with the earlier error", async () => {
    const { passThrough, direct } = wire();
    const redis = clientFor({ url: passThrough.url, token: sharedEndpoint().token });
    const warm = new Lock({ id: uniqueId("after-error-warm"), redis, lease: LEASE_MS });
    await (await warm.acquireOrThrow()).release(); // each try is one request
    const id = uniqueId("after-error");
    const uuid = crypto.randomUUID();
    const ahead = takerAhead();
    await direct.set(id, uuid, { px: LEASE_MS });
    await direct.set(companionKey(id, ":grant"), ahead, { px: LEASE_MS });
    passThrough.faults.status5xx(1); // the first try errs
    passThrough.faults.delayNext(3, 0); // its undo; the second try is told a later try holds
    const letGo = passThrough.faults.delayHeld(1); // the third, sent at once, is held past the timeout
    const lock = new Lock({ id, redis, lease: LEASE_MS });
    const failure = await lock
      .acquireOrThrow({ uuid, retry: { attempts: 10, delay: 200 }, timeout: 2_000 })
      .then(
        () => undefined,
        (error: unknown) => error,
      );
    letGo();
    expect(failure).toBeInstanceOf(LockAcquisitionError);
    expect((failure as LockAcquisitionError).reason).toBe("timeout");
  });
});
