// A renewal that reaches Redis after its lease was reported expired here (review helper-34). The acquire's
// request reached Redis 1 s late, so Redis's lease runs 1 s past the local deadline (counted from the send);
// the first renewal is held 1.3 s on the wire, so the deadline passes first: "expired", the instance's turn
// passes on. The renewal then lands while the key still holds the token, and set it a full lease again: the
// lock was held for nobody, and the next caller of the instance failed against it.
import { describe, expect, it, vi } from "vitest";
import { Lock, Semaphore } from "../../src/index";
import { uniqueId } from "../support/redis";
import { sharedEndpoint, useWire } from "./support/endpoints";
import { pause, waitUntil } from "./support/time";

const wire = useWire(() => sharedEndpoint());

describe("a renewal answered after the lease expired here", () => {
  it("releases the hold it renewed for nobody, and the next caller gets the lock", async () => {
    const id = uniqueId("late-renewal");
    const onLost = vi.fn();
    const lock = new Lock({
      id,
      redis: wire().faulty,
      lease: 3_000,
      autoExtend: { interval: 2_000 },
      onLost,
    });
    expect(await lock.acquire()).toBe(true); // warms the scripts
    await lock.release();
    wire().passThrough.faults.delayNext(1, 1_000); // the acquire reaches Redis 1 s after its send
    const started = performance.now();
    expect(await lock.acquire({ retry: { attempts: 1 } })).toBe(true);
    const token = await wire().direct.get<string>(id);
    wire().passThrough.faults.delayNext(1, 1_300); // the first renewal, sent at 2 s, lands at about 3.3 s
    const next = lock.acquire({ timeout: 4_000 }); // another caller of this instance
    await pause(4_400 - (performance.now() - started)); // Redis's own lease ended at about 4 s
    const heldForNobody = (await wire().direct.get<string>(id)) === token;
    const nextGot = await next;
    if (nextGot) await lock.release();
    expect({ lost: onLost.mock.calls.map(([error]) => error.reason), heldForNobody, nextGot }).toEqual({
      lost: ["expired"],
      heldForNobody: false,
      nextGot: true,
    });
  });

  it("of a chosen uuid releases nothing: the uuid may hold elsewhere by then (the README's hand-off)", async () => {
    // Review helper-35: the release of the stray renewal deleted the hold a worker had confirmed and
    // extended for the same uuid, and a third lock got the key while the worker's signal was live.
    const id = uniqueId("late-renewal-uuid");
    const uuid = crypto.randomUUID();
    const onLost = vi.fn();
    const first = new Lock({
      id,
      redis: wire().faulty,
      lease: 3_000,
      autoExtend: { interval: 2_000 },
      onLost,
    });
    expect(await first.acquire()).toBe(true); // warms the scripts
    await first.release();
    expect(await first.acquire({ uuid })).toBe(true);
    // The first renewal runs in Redis at once; its reply is held 1.8 s, past the local deadline.
    wire().passThrough.faults.delayRepliesNext(1, 1_800);
    await waitUntil(() => onLost.mock.calls.length > 0, "the lease reported lost", { timeoutMs: 6_000 });
    const worker = new Lock({ id, redis: wire().direct, uuid, lease: 3_000 });
    expect(await worker.getStatus()).toBe("ACQUIRED");
    expect(await worker.extend(30_000)).toBe(true);
    await waitUntil(() => wire().passThrough.stats.responses >= wire().requests(), "the renewal's reply", {
      timeoutMs: 6_000,
    });
    await first.pending;
    const third = await new Lock({ id, redis: wire().direct, lease: 3_000 }).acquire({
      retry: { attempts: 1 },
    });
    const state = {
      held: (await wire().direct.get(id)) === uuid,
      third,
      workerHolds: !worker.signal.aborted,
    };
    await worker.release();
    expect(state).toEqual({ held: true, third: false, workerHolds: true });
  });

  it.each(["Lock", "Semaphore"] as const)(
    "%s: a renewal that failed at the client yet ran leaves nothing held once the lease expired here",
    async (kind) => {
      // Review helper-36: the renewal's copies (cut at the client, forwarded 1.3 s later) renewed the key after
      // the lease was reported expired, and no answer ever came to release it.
      const id = uniqueId(`ghost-renewal-${kind}`);
      const onLost = vi.fn();
      const options = { id, redis: wire().faulty, lease: 3_000, autoExtend: { interval: 2_000 }, onLost };
      const semaphore = kind === "Semaphore" ? new Semaphore({ ...options, limit: 1 }) : undefined;
      const lock = kind === "Lock" ? new Lock(options) : undefined;
      const key = semaphore ? `{${id}}:permit:1` : id;
      if (semaphore) await (await semaphore.acquire())?.release(); // warms the scripts
      if (lock) await lock.acquire().then(() => lock.release());
      wire().passThrough.faults.delayNext(1, 1_000); // the acquire reaches Redis 1 s after its send
      const started = performance.now();
      const held = semaphore ? await semaphore.acquire({ retry: { attempts: 1 } }) : await lock?.acquire();
      expect(semaphore ? held !== undefined : held).toBe(true); // a lease (Semaphore) or true (Lock)
      await pause(1_900 - (performance.now() - started));
      // The renewal (about 2 s) and its retry (about 2.5 s), each with the copy fetch re-sends, all cut.
      wire().passThrough.faults.ghostNext(4, 1_300);
      await pause(5_500 - (performance.now() - started)); // the copies landed; Redis's own lease ended at ~4 s
      await (semaphore ?? lock)?.pending;
      expect({
        lost: onLost.mock.calls.map(([error]) => error.reason),
        held: await wire().direct.get(key),
      }).toEqual({
        lost: ["expired"],
        held: null,
      });
    },
  );
});
