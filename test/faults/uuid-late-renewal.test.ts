// Review helper-89 (2026-12-05): process A holds uuid U with auto-extend; a renewal's connection is cut, its
// client re-sends it, and its first copy lands later. Meanwhile A releases, and process B acquires U with a
// 1 s lease, then dies. The late copy renewed B's hold to A's 20 s lease: held for nobody for 19 s more
// (Lock 7/7, Semaphore 4/4). Release and extend named their hold already; a renewal now does too.
import { describe, expect, it } from "vitest";
import { type Lease, Lock, Semaphore } from "../../src/index";
import { companionKey } from "../../src/keys";
import { uniqueId } from "../support/redis";
import { sharedEndpoint, useWire } from "./support/endpoints";
import { pause, waitUntil } from "./support/time";

const wire = useWire(sharedEndpoint);

describe("a late copy of a renewal of an ended hold of a uuid", () => {
  for (const kind of ["Lock", "Semaphore"] as const)
    it(`${kind}: leaves the uuid's newer hold (another process) to its own lease`, async () => {
      const id = uniqueId("uuid-late-renewal");
      const uuid = crypto.randomUUID();
      const key = kind === "Lock" ? id : companionKey(id, ":permit:1");
      const options = { id, lease: 20_000, autoExtend: { interval: 300 } };
      const a =
        kind === "Lock"
          ? new Lock({ ...options, redis: wire().faulty })
          : new Semaphore({ ...options, redis: wire().faulty, limit: 1 });
      const held = await a.acquire({ uuid });
      const lease = held === true ? (a as Lock) : (held as Lease | undefined);
      expect(lease).toBeTruthy();
      const { passThrough } = wire();
      const before = wire().requests();
      const ranBefore = passThrough.ran();
      wire().passThrough.faults.ghostNext(1, 600); // the renewal at ~300 ms: re-sent, its first copy 600 ms late
      await waitUntil(() => wire().requests() >= before + 2, "the renewal and its re-sent copy");
      expect(await lease?.release()).toBe(true);
      await a.pending;
      const b =
        kind === "Lock"
          ? new Lock({ id, redis: wire().direct, lease: 1_000 })
          : new Semaphore({ id, redis: wire().direct, limit: 1, lease: 1_000 });
      expect(await b.acquire({ uuid })).toBeTruthy(); // then B dies, never releasing
      const bHeldAt = performance.now(); // B's 1 s lease began before its answer came
      // The late copy is still to land (else it renewed nothing of B's): one request arrived and has not run.
      expect(passThrough.stats.requests - before - (passThrough.ran() - ranBefore)).toBe(1);
      // The late copy landed: every request that reached the pass-through since ran in Redis, the late one
      // included (waited for, not assumed after a fixed 1.3 s).
      await waitUntil(() => {
        const arrived = passThrough.stats.requests - before;
        return arrived > 0 && passThrough.ran() - ranBefore >= arrived;
      }, "the renewal's late first copy to run");
      await pause(bHeldAt + 1_050 - performance.now()); // B's lease ran out
      expect({ holder: await wire().direct.get(key), pttl: await wire().direct.pttl(key) }).toEqual({
        holder: null,
        pttl: -2,
      });
    }, 15_000);
});
