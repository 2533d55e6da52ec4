// A try the line refuses as a late copy (its waiter's name was buried with a released permit's list, or it
// left the line) takes nothing. Its answer read as "held, 0 ms left" (`{0, 0, 0, 0}`), so a live waiter that
// reached it tried again every millisecond until its time ran out (review helper-82, stop 42). The answer now
// says "held, for how long unknown" (pttl -1): the waiter keeps its backoff.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FairLock } from "../../src/index";
import { companionKey } from "../../src/keys";
import { type PassThrough, startPassThrough } from "../support/pass-through";
import { uniqueId } from "../support/redis";
import { clientFor, sharedEndpoint } from "./support/endpoints";

let wire: PassThrough;
beforeAll(async () => {
  wire = await startPassThrough({ target: sharedEndpoint().url });
});
afterAll(() => wire.close());

describe("a fair try refused as a late copy", () => {
  it("answers as held for an unknown time: its waiter keeps its backoff", async () => {
    const id = uniqueId("refused-answer");
    const redis = clientFor(sharedEndpoint());
    const holder = new FairLock({ id, redis, lease: 10_000, autoExtend: false });
    expect(await holder.acquire()).toBe(true);
    const waiter = new FairLock({
      id,
      redis: clientFor({ url: wire.url, token: sharedEndpoint().token }),
      lease: 10_000,
      autoExtend: false,
      retry: { attempts: Number.POSITIVE_INFINITY, delay: 100 },
    });
    const waiting = waiter.acquire({ timeout: 1_200 });
    const queue = companionKey(id, ":queue");
    let member: string | undefined;
    for (let i = 0; i < 200 && !member; i++) {
      [member] = await redis.zrange<string[]>(queue, 0, -1);
      if (!member) await new Promise((r) => setTimeout(r, 5));
    }
    expect(member).toBeDefined();
    // As a release of a permit granted to this waiter would: its name in line buried in field "x".
    await redis.hset(companionKey(id, ":receipts"), { x: String(member).split(":")[0] });
    const before = wire.stats.requests;
    expect(await waiting).toBe(false);
    // About 12 tries at 100 ms apart (backoff may lengthen them); a millisecond's spin sends hundreds.
    expect(wire.stats.requests - before).toBeLessThan(40);
    await holder.release();
  });
});
