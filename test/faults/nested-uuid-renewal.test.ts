// Review helper-148 (stop 51, 12/12: Lock and FairLock, over ioredis and @upstash/redis): a `runExclusive`
// of a uuid with `autoExtend`, and inside it another of the same uuid without. The inner acquisition took
// the hold over (one uuid, one hold) and renewals were the newer lease's own: none. The outer work went on
// after the inner ended, its hold ran out in Redis, its signal aborted and `onLost` ran, while it believed
// itself exclusive; another process could have taken the lock. A lease taking over a live hold renews it at
// least as often as the lease it took it from did.
import { describe, expect, it } from "vitest";
import { FairLock, Lock } from "../../src/index";
import { uniqueId } from "../support/redis";
import { useBothClients } from "./support/both-clients";
import { pause } from "./support/time";

const { ioredis, clients } = useBothClients();

describe.each(["ioredis", "upstash"] as const)("%s", (name) => {
  it.each([
    ["Lock", Lock],
    ["FairLock", FairLock],
  ] as const)(
    "%s: an outer runExclusive's auto-extend outlives an inner one of the same uuid",
    async (_kind, Kind) => {
      const id = uniqueId("nested-uuid-renewal");
      const uuid = crypto.randomUUID();
      const lost: string[] = [];
      const lock = new Kind({ id, redis: clients[name](), lease: 1_200 });
      const seen = await lock.runExclusive(
        async (signal, outer) => {
          await lock.runExclusive(() => pause(300), { uuid, onLost: () => lost.push("inner") });
          await pause(2_700); // over two leases of work after the inner one ended
          return {
            aborted: signal.aborted,
            status: await outer.getStatus(),
            key: await ioredis().get(id),
            lost: [...lost],
          };
        },
        { uuid, autoExtend: true, onLost: () => lost.push("outer") },
      );
      expect(seen).toEqual({ aborted: false, status: "ACQUIRED", key: uuid, lost: [] });
      expect(await ioredis().get(id)).toBeNull(); // released at the outer one's end
    },
    20_000,
  );
});
