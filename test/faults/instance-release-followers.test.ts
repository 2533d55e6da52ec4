// Review helper-170 (stop 54), held up 8/8: lock.release() on the instance while runExclusive({ uuid }) work
// runs tells the work and an older plain lease of the uuid, with a try of the uuid in flight or not.
import { describe, expect, it } from "vitest";
import { useBothClients } from "./support/both-clients";
import { clientNames, lockKinds, sharedUuidCase } from "./support/shared-uuid";
import { pause } from "./support/time";

const { ioredis, clients } = useBothClients();

describe.each(clientNames)("%s", (name) => {
  describe.each(lockKinds)("%s", (_kind, Kind) => {
    it.each([false, true])(
      "I (try in flight: %s): work and older plain lease both told",
      async (inFlight) => {
        const { id, uuid, lost, told } = sharedUuidCase("instance-release-followers");
        const lock = new Kind({ id, redis: clients[name](), lease: 5_000 });
        expect(await lock.acquire({ uuid, onLost: told("plain") })).toBe(true);
        const plain = lock.signal;
        let later: Promise<boolean> = Promise.resolve(false);
        const workAborted = await lock.runExclusive(
          async (signal) => {
            if (inFlight) later = lock.acquire({ uuid });
            await lock.release();
            await pause(50);
            return signal.aborted;
          },
          { uuid, onLost: told("work") },
        );
        const took = await later;
        await pause(50);
        const seen = {
          workAborted,
          lost: [...lost].sort(),
          plain: plain.aborted,
          key: await ioredis().get(id),
        };
        if (took) await lock.release();
        // With the try in flight, it takes the hold over first (the release sends nothing), and, a plain acquire
        // made while the scope runs, ends with the scope (api.md): the older plain lease is told then.
        expect(seen).toEqual({
          workAborted: true,
          lost: ["plain taken", "work taken"],
          plain: true,
          key: null,
        });
      },
      20_000,
    );
  });
});
