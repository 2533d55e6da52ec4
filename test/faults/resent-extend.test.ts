// A request re-sent after a lost reply acts once while fewer than 32 releases and extends came between
// (docs/guarantees.md). A Lock keeps 32 extend ids; a FairLock's (and a semaphore's) permit kept only the
// newest 9 on its list (extendPermit's `buried(list, 8, id)`): an extend re-sent after 9 others of the hold
// added its amount a second time.
import { describe, expect, it } from "vitest";
import { FairLock, Lock } from "../../src/index";
import { uniqueId } from "../support/redis";
import { clientFor, sharedEndpoint, useWire } from "./support/endpoints";
import { waitUntil } from "./support/time";

const wire = useWire(sharedEndpoint);
// The 9 extends must all land before the re-send (the test checks that no second copy had arrived): 300 ms of
// pause and 10 round trips took up to 1.05 s beside 4 busy loops, which 2 s left too little room for.
const RESEND_AFTER_MS = 4_000;

describe.each([
  ["Lock (control)", Lock],
  ["FairLock", FairLock],
] as const)(
  "%s: an extend whose reply was lost, re-sent after 9 other extends of the hold",
  (_name, Kind) => {
    it("adds its amount once", async () => {
      const { passThrough, direct } = wire();
      const { token } = sharedEndpoint();
      const resending = clientFor(
        { url: passThrough.url, token },
        { retry: { retries: 1, backoff: () => RESEND_AFTER_MS } },
      );
      const id = uniqueId("resent-extend");
      const uuid = crypto.randomUUID();
      const lock = new Kind({ id, redis: resending, lease: 10_000 });
      expect(await lock.acquire({ uuid })).toBe(true);
      expect(await lock.extend(0)).toBe(true); // warm up the extend script on this client
      // The same holder, seen from another process (its uuid seeded there).
      const elsewhere = new Kind({ id, redis: direct, uuid });

      passThrough.faults.dropReplies(1);
      const [ranBefore, sentBefore] = [passThrough.ran(), passThrough.stats.requests];
      const extending = lock.extend(20_000); // runs (pttl ~30 s), reply lost, re-sent 4 s later
      // Its first copy ran in Redis: waited for, not assumed after a fixed 300 ms.
      await waitUntil(() => passThrough.ran() > ranBefore, "the extend's first copy to run", {
        intervalMs: 1,
      });
      const afterFirstRun = await direct.pttl(id);
      for (let i = 0; i < 9; i++) expect(await elsewhere.extend(0)).toBe(true);
      // The 9 extends all came before the re-send: only the first copy reached the pass-through by now (the
      // event itself, rather than a bound on the elapsed time).
      expect(passThrough.stats.requests - sentBefore).toBe(1);
      expect(await extending).toBe(true);
      const afterResend = await direct.pttl(id);
      // The re-send added nothing: the pttl only ran down (it was +20 s again on a FairLock).
      expect({
        afterFirstRunAbout30s: afterFirstRun > 25_000,
        grewOnResend: afterResend > afterFirstRun,
      }).toEqual({
        afterFirstRunAbout30s: true,
        grewOnResend: false,
      });
      await lock.release();
    }, 20_000);
  },
);
