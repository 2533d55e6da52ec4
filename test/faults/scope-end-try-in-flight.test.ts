// Review helper-170 (stop 54, 12/12 on f407518): a plain acquire made in a scope, then a nested scope; the
// outer scope's end released the hold while a try of the uuid was in flight, the try took the hold over, and
// its own caller's release later told the plain lease "taken" (api.md: a re-acquire in a scope ends with it,
// told no loss). The scope's end tells its followers as it begins, so that try's lease carries none.
import { describe, expect, it } from "vitest";
import { useBothClients } from "./support/both-clients";
import {
  clientNames,
  expectQuietEnd,
  lockKinds,
  plainAcquireInScope,
  sharedUuidCase,
} from "./support/shared-uuid";
import { pause, within } from "./support/time";

const { ioredis, clients } = useBothClients();

describe.each(clientNames)("%s", (name) => {
  describe.each(lockKinds)("%s", (_kind, Kind) => {
    it.each([true, false])(
      "G (try in flight at the scope's end: %s): the plain lease is told nothing",
      async (inFlight) => {
        const shared = sharedUuidCase("scope-end-try-in-flight");
        const { id, uuid, told } = shared;
        const lock = new Kind({ id, redis: clients[name](), lease: 5_000 });
        let later: Promise<boolean> = Promise.resolve(true);
        const { plain, afterScope } = await plainAcquireInScope(lock, shared, async () => {
          await lock.runExclusive(() => pause(10), { uuid, onLost: told("inner") });
          if (inFlight) later = lock.acquire({ uuid }); // another caller's, in flight as the scope ends
        });
        expect(await within(later, 5_000, "later")).toBe(true);
        if (inFlight) expect(await lock.release()).toBe(true); // the later caller releases its own
        await expectQuietEnd(shared, { plain, afterScope }, () => ioredis().get(id));
      },
      20_000,
    );
  });
});
