// Review helper-179: a same-uuid acquisition that held at once (the uuid seeded, confirmed here while
// another caller of the instance had the turn and was acquiring) wiped the instance's record of the turn's
// silence when its lease started (`turnHeld`), though the overtaken caller's acquisition went on, its try
// (sent after the same-uuid try, before that one's answer) still unanswered. A third caller, which began
// once the same-uuid lease was released and waited only for the overtaken caller while Redis answered
// nothing, was told plain contention: the silence it waited through went untold.
import { describe, expect, it } from "vitest";
import { Lock, LockAcquisitionError } from "../../src/index";
import { uniqueId } from "../support/redis";
import { usePrivateStack, useWire } from "./support/endpoints";
import { settle, toldBy } from "./support/settled";
import { waitUntil, within } from "./support/time";
import { trackUnhandledRejections } from "./support/unhandled";

const stack = usePrivateStack();
const wire = useWire(() => stack().endpoint);
const unhandled = trackUnhandledRejections();

describe("a seeded uuid's acquire, held at once, while another caller here has the turn and is acquiring", () => {
  it("a caller that waited only for that other caller, its try unanswered all the while, is told the silence", async () => {
    const id = uniqueId("turn-record-same-uuid");
    const uuid = crypto.randomUUID();
    const { direct, faulty, passThrough } = wire();
    const { stats, faults } = passThrough;
    await direct.set(id, uuid, { px: 20_000 }); // the seeded uuid holds, taken elsewhere
    const lock = new Lock({ id, redis: faulty, uuid, lease: 5_000, wakeOnRelease: false });
    const answeredBefore = stats.responses;
    // T: a random token; takes the turn (the seed is unconfirmed), its first try finds the lock held.
    const t = settle(lock.acquire({ timeout: 4_000, retry: { delay: 400 } }));
    await waitUntil(() => stats.responses > answeredBefore, "T's first try answered");
    // The seed is confirmed: its lease holds here (its turn waits for T's).
    expect(await lock.getStatus()).toBe("ACQUIRED");
    // S's try is answered 1.5 s late; T's next try, sent meanwhile, is held back past every wait here.
    faults.delayRepliesNext(1, 1_500);
    faults.delayNext(1, 0);
    faults.delayNext(1, 5_000);
    const requestsAtS = stats.requests;
    const s = settle(lock.acquire({ uuid })); // the same holder: no wait for the turn
    let sentBeforeS = 0;
    void s.then(() => {
      sentBeforeS = stats.requests - requestsAtS;
    });
    await waitUntil(() => stats.requests >= requestsAtS + 2, "S's try, then T's second, sent");
    expect((await within(s, 5_000, "S")).value).toBe(true);
    expect(sentBeforeS).toBe(2); // T's try went out before S's answer came
    expect(await lock.release()).toBe(true); // S's lease ends: the turn is T's again
    // W: begins after Redis answered S's try and release; waits only for T, whose try stays unanswered.
    const answeredAtW = stats.responses;
    const requestsAtW = stats.requests;
    const w = await within(settle(lock.acquireOrThrow({ timeout: 800 })), 5_000, "W");
    expect(stats.responses - answeredAtW).toBe(0); // Redis answered nothing while W waited
    expect(stats.requests).toBe(requestsAtW); // and nothing went to it
    expect(w.error).toBeInstanceOf(LockAcquisitionError);
    expect(toldBy(w.error as LockAcquisitionError)).toEqual({
      reason: "timeout",
      cause: expect.stringMatching(/^Redis did not answer/),
      message:
        "the timeout ran out while another caller of this instance was acquiring it, and Redis did not answer (no reply within N ms)",
    });
    expect((await within(t, 5_000, "T")).value).toBe(false);
    await within(lock.pending, 10_000, "the undo of T's cut-off try");
    await direct.del(id);
    expect(unhandled()).toEqual([]);
  }, 30_000);
});
