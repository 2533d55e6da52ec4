// Review helper-205 (helper-145's suspect): a fair waiter in line, the first copy of one of its tries late (its
// client re-sent it, and that copy queued it). The permit came free with no hand-over (a lease ran out, a key
// gone), the copy landed with the waiter first in line and took the permit for its token, listed under the
// copy's request id; the waiter, not trying again, gave up (abort, timeout), and its leave freed nothing: the
// permit stayed held for nobody for a lease.
import { describe, expect, it } from "vitest";
import { FairLock, Semaphore } from "../../src/index";
import { companionKey } from "../../src/keys";
import { uniqueId } from "../support/redis";
import { clientFor, usePrivateStack, useWire } from "./support/endpoints";
import { waitUntil } from "./support/time";

const stack = usePrivateStack();
const wire = useWire(() => stack().endpoint);
const LEASE_MS = 20_000;

const kinds = [
  [
    "FairLock",
    (id: string, redis: never) => new FairLock({ id, redis, lease: LEASE_MS, wakeOnRelease: false }),
    (id: string) => id,
  ],
  [
    "fair Semaphore",
    (id: string, redis: never) =>
      new Semaphore({ id, redis, lease: LEASE_MS, limit: 1, fair: true, wakeOnRelease: false }),
    (id: string) => companionKey(id, ":permit:1"),
  ],
] as const;

const ends = [
  ["aborted", (signal: AbortSignal) => ({ signal, retry: { delay: 5_000, maxDelay: 5_000 } })],
  [
    "timed out before its next try",
    (signal: AbortSignal) => ({ signal, timeout: 1_500, retry: { delay: 5_000, maxDelay: 5_000 } }),
  ],
] as const;

describe.each(kinds)(
  "%s: a late copy of a queued waiter's try, landing on a free permit",
  (_name, make, keyOf) => {
    it.each(ends)(
      "the waiter %s: the permit is not held for nobody",
      async (how, config) => {
        const { passThrough, direct } = wire();
        const resending = clientFor({ url: passThrough.url, token: stack().endpoint.token });
        const id = uniqueId("queued-late-copy");
        const permit = keyOf(id);
        await make(id, direct as never).acquire({ retry: { attempts: 1 } }); // the holder
        expect(await direct.get(permit)).toBeTruthy();
        await (
          await new Semaphore({
            id: uniqueId("queued-late-copy-warm"),
            redis: resending as never,
            limit: 1,
            fair: true,
          }).acquireOrThrow()
        ).release(); // the scripts are cached: the waiter's next try is one request
        const waiter = make(id, resending as never);
        const land = passThrough.faults.ghostHeld(1); // its first try's first copy, held; the re-sent one queues it
        const controller = new AbortController();
        const waited = (waiter.acquire(config(controller.signal)) as Promise<unknown>).then(
          (got) => ({ got }),
          (error: unknown) => ({ error }),
        );
        await waitUntil(async () => (await direct.zcard(companionKey(id, ":queue"))) === 1, "queued");
        await direct.del(permit); // free, nothing handed on (as a lease running out)
        const ran = passThrough.ran();
        land();
        await waitUntil(() => passThrough.ran() > ran, "the late copy ran");
        if (how === "aborted") controller.abort();
        const result = await waited;
        await waiter.pending;
        const acquired = "got" in result && !!result.got;
        const held = await direct.get(permit);
        const pttl = await direct.pttl(permit);
        // A live holder that knows it holds may keep it; otherwise it is free.
        if (acquired && "got" in result) {
          const holder =
            typeof result.got === "object"
              ? (result.got as { release(): Promise<boolean> })
              : (waiter as FairLock);
          expect(await holder.release()).toBe(true);
        }
        expect({ held: acquired ? null : held, pttl: acquired || held === null ? -2 : pttl }).toEqual({
          held: null,
          pttl: -2,
        });
      },
      20_000,
    );
  },
);
