// Review helper-83 (2026-12-05), on this stop's first version of acquireOrThrow()'s own disposal: after the
// caller re-acquired its uuid in the block (one hold), the disposal released only its own, retired lease:
// the lock stayed held for nobody (for good with autoExtend; 3/3). `await using` on acquireOrThrow({ uuid })
// (docs/api.md: "Acquiring again with the uuid of the current lease is the same holder: it re-acquires at
// once and restarts the lease").
import { describe, expect, it } from "vitest";
import { FairLock, Lock } from "../../src/index";
import { uniqueId } from "../support/redis";
import { sharedEndpoint, useWire } from "./support/endpoints";
import { pause } from "./support/time";

const wire = useWire(() => sharedEndpoint());

describe.each([Lock, FairLock])(
  "%o: await using, the caller restarts its lease by re-acquiring its uuid",
  (Kind) => {
    it.each([false, true])(
      "the block's end releases the lock (autoExtend on the re-acquire: %s)",
      async (auto) => {
        const id = uniqueId("reacquire-dispose");
        const lock = new Kind({ id, redis: wire().direct, lease: 3_000 });
        const uuid = crypto.randomUUID();
        {
          await using held = await lock.acquireOrThrow({ uuid });
          expect(await held.acquire({ uuid, ...(auto ? { autoExtend: true } : {}) })).toBe(true);
        }
        await pause(50);
        const exists = await wire().direct.exists(id);
        const other = new Lock({ id, redis: wire().direct, lease: 1_000 });
        const otherGot = await other.acquire({ retry: { attempts: 1 } });
        if (otherGot) await other.release();
        const stillBelievedHeld = lock.remainingMs > 0;
        await lock.release().catch(() => undefined);
        expect({ exists, otherGot, stillBelievedHeld }).toEqual({
          exists: 0,
          otherGot: true,
          stillBelievedHeld: false,
        });
      },
    );
  },
);
