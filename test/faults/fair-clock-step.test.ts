// Review helper-82 (2026-12-05), on this stop's first version of the fair deadline kept by a taking try: a
// waiter whose taking try's reply was lost (undone) tries on; its clock having stepped back (an NTP step),
// each try was refused as a late copy ({0,0,0,0}: pttl 0), and it spun (6/6, 350-600 requests). A waiter's
// clock now only moves forward.
import { afterEach, describe, expect, it, vi } from "vitest";
import { FairLock, Semaphore } from "../../src/index";
import { companionKey } from "../../src/keys";
import { uniqueId } from "../support/redis";
import { sharedEndpoint, useWire } from "./support/endpoints";
import { waitUntil } from "./support/time";

const wire = useWire(sharedEndpoint);
const STEP_MS = 3_000;

const kinds = [
  ["FairLock", (id: string, redis: never) => new FairLock({ id, redis, lease: 10_000 })],
  [
    "fair Semaphore",
    (id: string, redis: never) => new Semaphore({ id, redis, lease: 10_000, limit: 1, fair: true }),
  ],
] as const;

afterEach(() => {
  vi.restoreAllMocks();
});

describe.each(kinds)(
  "%s: a waiter whose try took the free lock, its reply lost, clock stepped back",
  (name, make) => {
    it("tries on and gets it, with few requests", async () => {
      const { passThrough, faulty, direct } = wire();
      const id = uniqueId("fair-clock-step");
      await (await make(uniqueId("fair-clock-step-warm"), faulty as never).acquireOrThrow()).release();
      await make(id, direct as never).acquireOrThrow();
      const subscribed = wire().subscriptions();
      const waiter = make(id, faulty as never);
      const pending = waiter.acquire({ timeout: 2_200, retry: { delay: 50 } });
      await waitUntil(async () => (await direct.zcard(companionKey(id, ":queue"))) === 1, "queued");
      // Subscribed (no drop hits it), and no try between arriving and running: the next try is the one the
      // faults below hit, whenever it goes (the poll covering the subscription goes once it is active).
      await waitUntil(() => wire().subscriptions() > subscribed && wire().inFlight() === 0, "subscribed");
      const before = passThrough.stats.requests;
      passThrough.faults.dropReplies(2); // its next try and the client's re-sent copy both run; no answer
      // ...after the holder's key is gone (below): held until then, however long the `del` takes.
      const letThrough = passThrough.faults.delayHeld(2);
      const ran = passThrough.ran();
      // The waiter's wall clock steps back by STEP_MS once that try is sent (an NTP step).
      const failed = passThrough.stats.failedByRoute["/pipeline"] ?? 0;
      const real = Date.now.bind(Date);
      const sends = passThrough.stats.requests;
      let stepped = false;
      vi.spyOn(Date, "now").mockImplementation(() => {
        if (!stepped && passThrough.stats.requests > sends) stepped = true;
        return stepped ? real() - STEP_MS : real();
      });
      await direct.del(name === "FairLock" ? id : companionKey(id, ":permit:1")); // the holder's key gone
      expect(passThrough.ran()).toBe(ran); // no try ran before: the first to run takes the lock, unanswered
      letThrough();
      const got = await pending;
      expect((passThrough.stats.failedByRoute["/pipeline"] ?? 0) - failed).toBe(2); // both copies' replies lost
      const spent = passThrough.stats.requests - before;
      expect(got).toBeTruthy();
      expect(spent).toBeLessThan(40); // ~2 s of 50 ms polls
      expect(await (typeof got === "object" ? got : (waiter as FairLock)).release()).toBe(true);
    }, 20_000);
  },
);
