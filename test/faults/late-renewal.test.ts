// A renewal that reaches Redis after its lease was reported expired here (review helper-34). The acquire's
// request reached Redis 1 s late, so Redis's lease runs 1 s past the local deadline (counted from the send);
// the first renewal is held 1.3 s on the wire, so the deadline passes first: "expired", the instance's turn
// passes on. The renewal then lands while the key still holds the token, and set it a full lease again: the
// lock was held for nobody, and the next caller of the instance failed against it.
import { describe, expect, it, vi } from "vitest";
import { Lock } from "../../src/index";
import { uniqueId } from "../support/redis";
import { sharedEndpoint, useWire } from "./support/endpoints";
import { pause } from "./support/time";

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
});
