// Review helper-168 (6/6): a quorum Semaphore's try whose caller gave up (an abort, a timeout) during its
// first round went on with rounds for the other permits, and took a free one for nobody until its undo
// landed: meanwhile another Semaphore was turned away, every permit held. Review helper-169 (6/6 after that
// fix): so did a try this process stalled over, which the acquisition gave up on without an abort.
import { afterEach, describe, expect, it, vi } from "vitest";
import { quorum, Semaphore } from "../../src/index";
import { uniqueId } from "../support/redis";
import { useHttpMembers } from "./support/members";

const members = useHttpMembers(3);
afterEach(() => vi.restoreAllMocks());

/**
 * A quorum Semaphore of 3 permits over 3 slow members (600 ms a request) on which permits 1 and 2 are held,
 * its scripts loaded, whose next try starts at permit 1. `requestsDuring` runs an acquisition, waits for its
 * background work, cleans up, and returns the requests each member got meanwhile.
 */
async function slowSemaphoreTwoPermitsHeld() {
  const id = uniqueId("semaphore-abandoned-try");
  const permitKey = (permit: number) => `{${id}}:permit:${permit}`;
  const all = members();
  for (const member of all) {
    await member.direct.set(permitKey(1), "another holder", { px: 60_000 });
    await member.direct.set(permitKey(2), "a third holder", { px: 60_000 });
  }
  const options = { id, limit: 3, lease: 6_000, retry: { attempts: 1 } };
  const semaphore = new Semaphore({ ...options, redis: quorum(all.map((member) => member.faulty)) });
  await (await semaphore.acquire())?.release(); // loads the scripts on every member
  await semaphore.pending;
  vi.spyOn(Math, "random").mockReturnValue(0); // the try starts at permit 1
  for (const member of all) member.passThrough.faults.latency(600);
  const requestsDuring = async (acquisition: () => Promise<unknown>): Promise<number[]> => {
    const before = all.map((member) => member.passThrough.stats.requests);
    await acquisition();
    await semaphore.pending;
    const sent = all.map((member, index) => member.passThrough.stats.requests - (before[index] ?? 0));
    for (const member of all) member.passThrough.faults.reset();
    for (const member of all) await member.direct.del(permitKey(1), permitKey(2), permitKey(3));
    return sent;
  };
  return { semaphore, requestsDuring };
}

describe.each(["signal", "timeout"] as const)(
  "a quorum Semaphore try given up on by its %s in round 1",
  (how) => {
    it("sends no later round, which could take a permit for nobody", async () => {
      const { semaphore, requestsDuring } = await slowSemaphoreTwoPermitsHeld();
      const sent = await requestsDuring(async () => {
        const controller = new AbortController();
        const call = semaphore.acquire(how === "signal" ? { signal: controller.signal } : { timeout: 100 });
        const timer = setTimeout(() => controller.abort(new Error("the caller gave up")), 100);
        await call.catch(() => undefined);
        clearTimeout(timer);
      });
      // Round 1 (permit 1, held: nothing to undo) was the only request to each member: no round for permit 2
      // or 3, so no permit taken for nobody, and no undo of one.
      expect(sent).toEqual([1, 1, 1]);
    }, 30_000);
  },
);

describe("a quorum Semaphore try this process stalled over in round 1", () => {
  it("sends no later round once the acquisition gave up on it", async () => {
    const { semaphore, requestsDuring } = await slowSemaphoreTwoPermitsHeld();
    let outcome: unknown = "not settled";
    const sent = await requestsDuring(async () => {
      const call = semaphore.acquire({ timeout: 200 });
      await new Promise((resolve) => setTimeout(resolve, 20));
      const until = performance.now() + 500; // the process stalls (a blocked event loop) while the try is out
      while (performance.now() < until) {}
      outcome = await call;
    });
    expect(outcome).toBeUndefined(); // its timeout ran out in the stall
    expect(sent).toEqual([1, 1, 1]);
  }, 30_000);
});
