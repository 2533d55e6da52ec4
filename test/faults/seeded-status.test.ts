// getStatus() on a Lock seeded with a uuid ("Releasing from another process") is one request that tells
// whether the token holds (review helper-23). A holder's lease left shorter than the seeded Lock's own
// `lease` (default 10 s) was taken for a short grant and topped up halfway through, without autoExtend: the
// status check stretched another process's 2 s lease to 10 s, so a crashed holder blocked everyone 5× longer.
import { describe, expect, it } from "vitest";
import { Lock } from "../../src/index";
import { uniqueId } from "../support/redis";
import { sharedEndpoint, useWire } from "./support/endpoints";
import { pause } from "./support/time";

const wire = useWire(() => sharedEndpoint());

describe("getStatus() of a seeded uuid", () => {
  it("is one request and leaves the holder's 2 s lease alone", async () => {
    const id = uniqueId("seeded-status");
    const uuid = crypto.randomUUID();
    // The holder: acquires with a 2 s lease and then crashes (never releases, no renewals).
    const holder = new Lock({ id, redis: wire().direct, lease: 2_000 });
    expect(await holder.acquire({ uuid })).toBe(true);
    // A monitor/worker seeded with the uuid checks the status once.
    const seeded = new Lock({ id, redis: wire().faulty, uuid });
    const before = wire().requests();
    expect(await seeded.getStatus()).toBe("ACQUIRED");
    await pause(2_500); // the holder's lease is over by now
    const requests = wire().requests() - before;
    const pttl = await wire().direct.pttl(id);
    const other = new Lock({ id, redis: wire().direct, lease: 1_000 });
    const otherGotIt = await other.acquire({ retry: { attempts: 1 } });
    await other.release();
    await seeded.release().catch(() => false);
    expect({ requests, keyGoneAfterLease: pttl === -2, otherGotIt }).toEqual({
      requests: 1,
      keyGoneAfterLease: true,
      otherGotIt: true,
    });
  });
});
