// Review helper-163 (stop 53; 6/6 at each limit, fair or not), on the first version of the fix that tells an
// older lease of a uuid it lost its hold when a newer take made a new hold: two acquisitions of one uuid
// started together on one Semaphore. The try that took the permit answered after the one that confirmed it:
// the confirming lease was held here first, and the late "made a new hold" then told it a loss, though the
// uuid held the permit throughout. A take says something only of a lease that held as its acquisition began.
import { describe, expect, it } from "vitest";
import { Semaphore } from "../../src/index";
import { uniqueId } from "../support/redis";
import { usePrivateStack, useWire } from "./support/endpoints";
import { pause, waitUntil } from "./support/time";

const stack = usePrivateStack();
const wire = useWire(() => stack().endpoint);

describe.each([
  [1, false],
  [2, false],
  [1, true],
  [2, true],
])("Semaphore limit %i, fair %s", (limit, fair) => {
  it("the taking try's reply read after the confirming one's: no lease of the uuid is told a loss", async () => {
    const id = uniqueId("nested-take-order");
    const uuid = crypto.randomUUID();
    const semaphore = new Semaphore({ id, redis: wire().faulty, limit, fair, lease: 10_000 });
    const lost: string[] = [];
    const acquire = (name: string) =>
      semaphore.acquireOrThrow({ uuid, onLost: (error) => lost.push(`${name} ${error.reason}`) });
    await semaphore.acquireOrThrow().then((lease) => lease.release()); // the script cached
    wire().passThrough.faults.delayRepliesNext(1, 300);
    const ranBefore = wire().passThrough.ran();
    const first = acquire("first");
    // The first try ran in Redis: it took the permit; its reply is held back. Waited for, not assumed after
    // a fixed 50 ms: a loaded machine could send it later, and the second try would then take the permit.
    await waitUntil(() => wire().passThrough.ran() > ranBefore, "the first try to run in Redis", {
      intervalMs: 1,
    });
    const leases = await Promise.all([first, acquire("second")]);
    await pause(20);
    const seen = { aborted: leases.map((lease) => lease.signal.aborted), lost: [...lost] };
    for (const lease of leases.reverse()) await lease.release();
    expect(seen).toEqual({ aborted: [false, false], lost: [] });
  });
});
