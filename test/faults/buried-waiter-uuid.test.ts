// Review helper-140 (stop 51, 5/5 and 3/3): a fair Semaphore's waiter with a `uuid` was handed the permit by
// a release; another acquisition of the same uuid confirmed that hold and released it, which buries the
// waiter's name (its tries' late copies must take nothing). The uuid then held again. Every later try of the
// live waiter was refused as a late copy, before the check of its own token: it failed "held by another
// owner" while its own uuid held the permit, and, on the same instance, the refusal reported the uuid's live
// lease lost (its signal aborted, the hold left to expire under nobody). A buried waiter still takes nothing
// free, but confirms its token's hold, as any try of a uuid that holds does.
import { describe, expect, it } from "vitest";
import { Semaphore } from "../../src/index";
import { uniqueId } from "../support/redis";
import { usePrivateStack, useWire } from "./support/endpoints";
import { pause } from "./support/time";

const stack = usePrivateStack();
const wire = useWire(() => stack().endpoint);

describe("a fair waiter with a uuid, whose handed permit another acquisition of the uuid released", () => {
  it.each(["on the same instance", "on another instance"] as const)(
    "confirms the uuid's newer hold %s, and leaves that lease live",
    async (where) => {
      const id = uniqueId("buried-waiter-uuid");
      const redis = wire().direct;
      const options = { id, redis, lease: 5_000, limit: 1, fair: true } as const;
      const holder = new Semaphore(options);
      const here = new Semaphore({ ...options, wakeOnRelease: false });
      const rerun = where === "on the same instance" ? here : new Semaphore(options);
      const uuid = crypto.randomUUID();
      const first = await holder.acquireOrThrow();
      const waiting = here.acquire({ uuid, retry: { attempts: 4, delay: 1_000 }, wakeOnRelease: false });
      await pause(150); // the waiter is in line
      expect(await first.release()).toBe(true); // hands the permit to the waiter's token
      const confirming = await rerun.acquireOrThrow({ uuid, retry: { attempts: 1 } });
      expect(await confirming.release()).toBe(true); // buries the waiter's name
      const newer = await rerun.acquireOrThrow({ uuid, retry: { attempts: 1 } });
      const waiter = await waiting;
      const held = await redis.get(`{${id}}:permit:1`);
      expect({ waiter: waiter !== undefined, newerLost: newer.signal.aborted, held }).toEqual({
        waiter: true,
        newerLost: false,
        held: uuid,
      });
      await (waiter ?? newer).release();
      await rerun.pending;
      await here.pending;
    },
    15_000,
  );
});
