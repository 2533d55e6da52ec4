// A plain Lock's try that finds its own `uuid` holding, by a try sent after it (review helper-200, B4; the fix
// is helper-213's design). Its client re-sent it (a connection cut mid-request), the re-sent copy was refused
// (another holder), and the caller moved on; the first copy landed once a later acquisition of the same uuid
// held the lock, and confirmed that hold. That acquisition then gave its try up (undone): an undo frees a hold
// only once every try on its list was abandoned, the late copy's was not, and the lock stayed held for nobody
// for a lease (12/12). Now a try sent no later than the hold's taker confirms nothing; a live one (two
// acquisitions of one uuid crossing) is sent again at once with a later id, one request more.
import { describe, expect, it } from "vitest";
import { Debounce, Lock } from "../../src/index";
import { companionKey } from "../../src/keys";
import { countCall } from "../../src/scripts/debounce";
import { uniqueId } from "../support/redis";
import { takerAhead } from "../support/taker-ahead";
import { clientFor, sharedEndpoint, useWire } from "./support/endpoints";
import { waitUntil } from "./support/time";

const wire = useWire(sharedEndpoint);
const LEASE_MS = 20_000;

/** Requests that reached the pass-through and have not run in Redis (held, ghosted). */
function notRun(): number {
  const { passThrough } = wire();
  return passThrough.stats.requests - passThrough.ran();
}

/** A client through the pass-through (re-sending a request whose connection broke), its scripts cached. */
async function resendingClient(): Promise<ReturnType<typeof clientFor>> {
  const redis = clientFor({ url: wire().passThrough.url, token: sharedEndpoint().token });
  const warm = new Lock({ id: uniqueId("late-try-warm"), redis, lease: LEASE_MS });
  await (await warm.acquireOrThrow()).release(); // the next try is one request
  return redis;
}

describe("a plain Lock's try that finds its uuid held by a later try", () => {
  it("confirms nothing when it is a late copy of a refused try: the later hold, undone, frees the lock", async () => {
    const { passThrough, direct } = wire();
    const id = uniqueId("late-refused-copy");
    const uuid = crypto.randomUUID();
    const redis = await resendingClient();
    await direct.set(id, "another holder", { px: LEASE_MS });
    // The first copy of the try is held at the pass-through; the client re-sends it, and that copy is refused.
    const land = passThrough.faults.ghostHeld(1);
    const first = new Lock({ id, redis, lease: LEASE_MS });
    expect(await first.acquire({ uuid, retry: { attempts: 1 } })).toBe(false);
    expect(notRun()).toBe(1);
    await direct.del(id);
    // A later acquisition of the uuid takes the lock; its reply is held, and its caller gives up on it.
    const answer = passThrough.faults.delayRepliesHeld(1);
    const controller = new AbortController();
    const second = new Lock({ id, redis, lease: LEASE_MS });
    const giving = second.acquire({ uuid, signal: controller.signal });
    await waitUntil(async () => (await direct.get(id)) === uuid, "the later try's hold", {
      timeoutMs: 15_000,
    });
    controller.abort();
    await expect(giving).rejects.toMatchObject({ name: "AbortError" });
    land();
    await waitUntil(() => notRun() <= 0, "the late copy ran", { timeoutMs: 15_000 });
    expect(await direct.get(id)).toBe(uuid); // the later hold still stands, not shortened
    answer();
    await second.pending; // its undo ran
    expect(await direct.get(id)).toBeNull();
    expect(await direct.pttl(companionKey(id, ":grant"))).toBeGreaterThan(0); // names the tries to refuse
  });

  it("sent live beside a later try of its uuid, holds with it, at one request more", async () => {
    const { passThrough, direct } = wire();
    const id = uniqueId("crossing-same-uuid");
    const uuid = crypto.randomUUID();
    const redis = await resendingClient();
    const release = passThrough.faults.delayHeld(1);
    const sent = passThrough.stats.requests;
    const first = new Lock({ id, redis, lease: LEASE_MS });
    const crossing = first.acquire({ uuid, retry: { attempts: 1 } });
    await waitUntil(() => passThrough.stats.requests > sent, "the earlier try at the pass-through", {
      intervalMs: 1,
    });
    const second = new Lock({ id, redis, lease: LEASE_MS });
    expect(await second.acquire({ uuid, retry: { attempts: 1 } })).toBe(true);
    const before = passThrough.stats.requests;
    release();
    expect(await crossing).toBe(true);
    expect(passThrough.stats.requests - before).toBe(1); // its try again, with an id after the taker's
    expect(await direct.get(id)).toBe(uuid);
    expect(await first.release()).toBe(true);
    expect(await direct.get(id)).toBeNull();
  });

  it("acquires though the taker's clock ran 10 s ahead of this process's", async () => {
    const { passThrough, direct } = wire();
    const id = uniqueId("taker-ahead");
    const uuid = crypto.randomUUID();
    const redis = await resendingClient();
    const ahead = takerAhead();
    await direct.set(id, uuid, { px: LEASE_MS });
    await direct.set(companionKey(id, ":grant"), ahead, { px: LEASE_MS });
    const before = passThrough.stats.requests;
    const lock = new Lock({ id, redis, lease: LEASE_MS });
    // Bounded: were the next id not moved past the taker's, each try would be told so again until this ends.
    expect(await lock.acquire({ uuid, retry: { attempts: 1 }, timeout: 3_000 })).toBe(true);
    expect(passThrough.stats.requests - before).toBe(2);
    expect(await direct.get(companionKey(id, ":grant"))).toMatch(new RegExp(`^${ahead} \\S+ \\S+!$`)); // the refused try named, abandoned
  });
});

// Review helper-216: a refused try wrote nothing at first, so nothing named it; its ghosted first copy (the
// client re-sent it, the re-sent copy being the one refused), landing once the hold was released, took the
// lock for nobody (6/6). It is named abandoned on the hold's list now.
describe("a try of a uuid refused as no later than the hold's taker", () => {
  it("its ghosted first copy takes nothing once the hold is released (taker of a clock ahead)", async () => {
    const { passThrough, direct } = wire();
    const id = uniqueId("refused-copy-after-release");
    const uuid = crypto.randomUUID();
    const redis = await resendingClient();
    // The uuid holds by a try of a process whose clock runs 10 s ahead (or a crossing later try).
    const ahead = takerAhead();
    await direct.set(id, uuid, { px: LEASE_MS });
    await direct.set(companionKey(id, ":grant"), ahead, { px: LEASE_MS });
    const land = passThrough.faults.ghostHeld(1); // the try's first copy, held; the re-sent copy is told -3
    const lock = new Lock({ id, redis, lease: LEASE_MS });
    expect(await lock.acquire({ uuid, retry: { attempts: 1 }, timeout: 5_000 })).toBe(true);
    expect(notRun()).toBe(1);
    expect(await lock.release()).toBe(true);
    expect(await direct.get(id)).toBeNull();
    land();
    await waitUntil(() => notRun() <= 0, "the first copy ran", { timeoutMs: 15_000 });
    expect(await direct.get(id)).toBeNull(); // else held a lease for nobody
  });

  it("its ghosted first copy takes nothing once the hold is released (two crossing acquisitions)", async () => {
    const { passThrough, direct } = wire();
    const id = uniqueId("refused-copy-crossing");
    const uuid = crypto.randomUUID();
    const redis = await resendingClient();
    // The earlier acquisition's first copy is ghosted, its re-sent copy held until the later one took the lock.
    const land = passThrough.faults.ghostHeld(1);
    const resend = passThrough.faults.delayHeld(2); // the first copy takes the first entry, unused
    const sent = passThrough.stats.requests;
    const first = new Lock({ id, redis, lease: LEASE_MS });
    const crossing = first.acquire({ uuid, retry: { attempts: 1 }, timeout: 10_000 });
    await waitUntil(() => passThrough.stats.requests >= sent + 2, "both copies at the pass-through", {
      timeoutMs: 15_000,
      intervalMs: 1,
    });
    const second = new Lock({ id, redis, lease: LEASE_MS });
    expect(await second.acquire({ uuid, retry: { attempts: 1 } })).toBe(true);
    resend();
    expect(await crossing).toBe(true);
    expect(await first.release()).toBe(true);
    expect(await direct.get(id)).toBeNull();
    land();
    await waitUntil(() => notRun() <= 0, "the first copy ran", { timeoutMs: 15_000 });
    expect(await direct.get(id)).toBeNull();
  });

  it("acquires when the refused copy's answer is lost and the re-sent copy finds it named", async () => {
    const { passThrough, direct } = wire();
    const id = uniqueId("refused-reply-lost");
    const uuid = crypto.randomUUID();
    const redis = await resendingClient();
    const ahead = takerAhead();
    await direct.set(id, uuid, { px: LEASE_MS });
    await direct.set(companionKey(id, ":grant"), ahead, { px: LEASE_MS });
    passThrough.faults.dropReplies(1); // the refusal ran; its answer is lost, and the client re-sends the try
    const lock = new Lock({ id, redis, lease: LEASE_MS });
    expect(await lock.acquire({ uuid, retry: { attempts: 1 }, timeout: 5_000 })).toBe(true);
    expect(await lock.release()).toBe(true);
    expect(await direct.get(id)).toBeNull();
  });
});

// Review helper-216: the order moved past a taker's clock was Debounce's too, whose script reads its ids as
// the calls' times: another process's call, its clock right, then counted nothing.
describe("a lock holder's clock ahead, met by a try of its uuid", () => {
  it("leaves this process's debounce calls on this process's clock", async () => {
    const { direct } = wire();
    const redis = clientFor({ url: wire().passThrough.url, token: sharedEndpoint().token });
    const id = uniqueId("order-ahead");
    const uuid = crypto.randomUUID();
    const ahead = takerAhead(120_000);
    await direct.set(id, uuid, { px: LEASE_MS });
    await direct.set(companionKey(id, ":grant"), ahead, { px: LEASE_MS });
    expect(await new Lock({ id, redis, lease: LEASE_MS }).acquire({ uuid, retry: { attempts: 1 } })).toBe(
      true,
    );
    const debounced = uniqueId("order-ahead-debounce");
    const debounce = new Debounce({ id: debounced, redis, wait: 1, callback: () => {} });
    expect(await debounce.call()).toBe(true);
    // Another process's call, its clock right: counted (a count above 0), not taken for one over 60 s old.
    const other = `${Date.now() * 1000}-zzzzzz`;
    const keys = [debounced, companionKey(debounced, ":calls")];
    expect(await direct.eval(countCall.source, keys, [60_000, other])).toBeGreaterThan(0);
  });
});
