// Review helper-218: concurrent acquisitions of one uuid (one per instance), whose tries reach Redis in the
// reverse of their send order: each try after the first to land is refused once (sent no later than the
// taker), named abandoned, and sent again; the list gains two entries per acquisition, not one.
import { describe, expect, it } from "vitest";
import { Lock } from "../../src/index";
import { companionKey } from "../../src/keys";
import { uniqueId } from "../support/redis";
import { clientFor, sharedEndpoint, useWire } from "./support/endpoints";
import { waitUntil } from "./support/time";

const wire = useWire(sharedEndpoint);
const LEASE_MS = 20_000;
const CALLERS = 40;

describe("many acquisitions of one uuid crossing", () => {
  it("each keeps its hold: its extend finds its own try on the list", async () => {
    const { passThrough, direct } = wire();
    // Two clients: one's commands of a tick go in one request (auto-pipelining), in their order.
    const endpoint = { url: passThrough.url, token: sharedEndpoint().token };
    const [redis, other] = [clientFor(endpoint), clientFor(endpoint)];
    for (const client of [redis, other]) {
      const warm = new Lock({ id: uniqueId("growth-warm"), redis: client, lease: LEASE_MS });
      await (await warm.acquireOrThrow()).release(); // its scripts cached
    }
    const id = uniqueId("refusal-growth");
    const uuid = crypto.randomUUID();
    const release = passThrough.faults.delayHeld(1);
    const sent = passThrough.stats.requests;
    const locks = Array.from(
      { length: CALLERS },
      (_, index) => new Lock({ id, redis: index < CALLERS - 1 ? redis : other, lease: LEASE_MS }),
    );
    const early = locks.slice(0, -1).map((lock) => lock.acquire({ uuid, retry: { attempts: 1 } }));
    await waitUntil(() => passThrough.stats.requests > sent, "the early tries held", {
      timeoutMs: 15_000,
      intervalMs: 1,
    });
    const last = locks[CALLERS - 1] as Lock;
    expect(await last.acquire({ uuid, retry: { attempts: 1 } })).toBe(true); // the taker: sent last
    release();
    expect(await Promise.all(early)).toEqual(early.map(() => true));
    const grant = ((await direct.get(companionKey(id, ":grant"))) as string).split(" ");
    const extended = await Promise.all(locks.map((lock) => lock.extend(1_000)));
    // Before the refusals (0.5's list of 40 entries): no `*`, and every caller's extend held (3/3).
    expect({ star: grant.includes("*"), lost: extended.filter((held) => !held).length }).toEqual({
      star: false,
      lost: 0,
    });
    await last.release();
  }, 30_000);
});
