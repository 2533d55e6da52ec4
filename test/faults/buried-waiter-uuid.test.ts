// Review helper-140 (stop 51, 5/5 and 3/3): a fair Semaphore's waiter with a `uuid` was handed the permit by
// a release; another acquisition of the same uuid confirmed that hold and released it, which buries the
// waiter's name (its tries' late copies must take nothing). The uuid then held again. Every later try of the
// live waiter was refused as a late copy, before the check of its own token: it failed "held by another
// owner" while its own uuid held the permit, and, on the same instance, the refusal reported the uuid's live
// lease lost (its signal aborted, the hold left to expire under nobody). A buried waiter still takes nothing
// free, but confirms its token's hold, as any try of a uuid that holds does.
//
// Review helper-144 (stop 51, 5/5; 3/3 passed before that fix): so did a late copy of the waiter's first try,
// landing on a newer hold of the uuid whose try was then undone (its caller gave up): the copy's id kept the
// permit held for nobody for a lease. The same was so already (5/5, 1/1 before) for a waiter whose own later
// try took the permit. A try sent no later than its waiter left the line (its clock says so) confirms only
// the hold it took itself (a re-run of it).
import { describe, expect, it } from "vitest";
import { Semaphore } from "../../src/index";
import { companionKey } from "../../src/keys";
import { uniqueId } from "../support/redis";
import { clientFor, usePrivateStack, useWire } from "./support/endpoints";
import { pause, waitUntil } from "./support/time";

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
      await waitUntil(
        async () => (await redis.zcard(companionKey(id, ":queue"))) === 1,
        "the waiter in line",
      );
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

describe("a late copy of a fair waiter's first try, landing on a newer hold of its uuid whose try is undone", () => {
  it.each(["a release handed it the permit", "its own later try took the permit"] as const)(
    "leaves nothing held for nobody, when %s",
    async (how) => {
      const { passThrough, direct } = wire();
      const { token } = stack().endpoint;
      const resending = clientFor({ url: passThrough.url, token }); // re-sends a request whose connection broke
      const id = uniqueId("buried-waiter-copy");
      const options = { id, lease: 10_000, limit: 1, fair: true, wakeOnRelease: false } as const;
      const permit = `{${id}}:permit:1`;
      const handed = how === "a release handed it the permit";
      const holder = await new Semaphore({
        ...options,
        redis: direct,
        lease: handed ? 10_000 : 1_000,
      }).acquireOrThrow();
      const waiting = new Semaphore({ ...options, redis: resending });
      const warm = new Semaphore({ ...options, id: uniqueId("buried-waiter-warm"), redis: resending });
      await (await warm.acquireOrThrow()).release(); // the scripts are cached: the next try is one request
      const uuid = crypto.randomUUID();
      const startedAt = performance.now();
      passThrough.faults.ghostNext(1, 3_000); // the waiter's first try: sent again at once, a copy lands at +3 s
      const acquiring = waiting.acquire({ uuid, timeout: 2_500, retry: { delay: 50 } });
      if (handed) {
        await waitUntil(async () => (await direct.zcard(companionKey(id, ":queue"))) === 1, "queued");
        expect(await holder.release()).toBe(true); // hands the permit to the waiter
      } // else the holder's lease runs out, and a later try of the waiter takes the permit
      const lease = await acquiring;
      expect(lease).toBeDefined();
      expect(await lease?.release()).toBe(true);
      await waiting.pending;
      // Another process takes the uuid anew; its caller gives up before the reply comes: its try is undone.
      const other = new Semaphore({ ...options, redis: clientFor({ url: passThrough.url, token }) });
      passThrough.faults.delayRepliesNext(1, 4_500);
      const controller = new AbortController();
      const given = other
        .acquire({ uuid, retry: { attempts: 1 }, signal: controller.signal })
        .catch((e) => e);
      await waitUntil(async () => (await direct.get(permit)) === uuid, "taken anew");
      controller.abort();
      await given;
      await pause(Math.max(0, startedAt + 8_000 - performance.now())); // the copy landed, then the undo ran
      await other.pending;
      const next = await new Semaphore({ ...options, redis: direct }).acquire({ retry: { attempts: 1 } });
      expect({ nextTook: next !== undefined }).toEqual({ nextTook: true });
      await next?.release();
    },
    30_000,
  );
});
