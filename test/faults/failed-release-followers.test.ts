// Review helper-170 (stop 54), held up 8/8: the older leases a lease took its uuid's hold over from are told
// when its release fails (5xx, a frozen Redis with a client timeout), by release() and by `await using`.
import { describe, expect, it } from "vitest";
import { useBothClients } from "./support/both-clients";
import { clientNames, lockKinds, sharedUuidCase, useFailingClients } from "./support/shared-uuid";
import { pause } from "./support/time";

const failing = useFailingClients(useBothClients());

describe.each(clientNames)("%s", (name) => {
  describe.each(lockKinds)("%s", (_kind, Kind) => {
    it.each(["release", "dispose"])(
      "H: L2's %s fails: L1 is told",
      async (how) => {
        const { id, uuid, lost, told } = sharedUuidCase("failed-release-followers");
        const client = failing(name);
        const lock = new Kind({ id, redis: client.redis, lease: 1_500 });
        expect(await lock.acquire({ uuid, onLost: told("L1") })).toBe(true);
        const l1 = lock.signal;
        expect(await lock.acquire({ uuid })).toBe(true);
        client.failNext();
        let threw = false;
        try {
          if (how === "release") await lock.release().catch(() => (threw = true));
          else await lock[Symbol.asyncDispose]();
        } finally {
          client.recover();
        }
        await pause(50);
        expect({ lost, aborted: l1.aborted, threw }).toEqual({
          lost: ["L1 taken"],
          aborted: true,
          threw: how === "release",
        });
      },
      20_000,
    );
  });
});
