// Auto-extend against a real Redis, through a pass-through that counts and faults the lock's
// requests while a direct client watches the key.
import { beforeAll, describe, expect, it, vi } from "vitest";
import { Lock } from "../../src/index";
import { uniqueId } from "../support/redis";
import { releasedAfterTest } from "./support/cleanup";
import { sharedEndpoint, useWire } from "./support/endpoints";
import { now, pause } from "./support/time";
import { trackUnhandledRejections } from "./support/unhandled";

const wire = useWire(sharedEndpoint);
const unhandled = trackUnhandledRejections();

// Sampled in one script so value and PTTL describe the same instant.
const SAMPLE = `return {redis.call("GET", KEYS[1]) or "", redis.call("PTTL", KEYS[1])}`;

interface Watch {
  samples: number;
  minPttl: number;
  /** Samples in which the key did not hold the holder's token (gone, or someone else's). */
  foreign: number;
  /** When the first such sample was taken, in ms into the watch. */
  firstForeignAtMs: number | undefined;
  /** The slowest sample's round trip: a loaded machine shows here. */
  slowestSampleMs: number;
  /** How long the watch lasted, in ms. */
  elapsedMs: number;
}

/**
 * Samples the key's value and PTTL through the direct client until `ms` have passed and, if given, `until`
 * holds: a watch that waits for the events it counts rather than for a time in which they should fit. It
 * stops at `capMs` in any case, so that a missing event fails the test's assertions instead of hanging.
 */
async function watchKey(
  id: string,
  token: string,
  ms: number,
  { until = () => true, capMs = ms }: { readonly until?: () => boolean; readonly capMs?: number } = {},
): Promise<Watch> {
  const watch: Watch = {
    samples: 0,
    minPttl: Number.POSITIVE_INFINITY,
    foreign: 0,
    firstForeignAtMs: undefined,
    slowestSampleMs: 0,
    elapsedMs: 0,
  };
  const start = now();
  while ((now() < start + ms || !until()) && now() < start + capMs) {
    const sentAt = now();
    const [value, pttl] = await wire().direct.eval<[], [string, number]>(SAMPLE, [id], []);
    watch.slowestSampleMs = Math.max(watch.slowestSampleMs, now() - sentAt);
    watch.samples += 1;
    watch.minPttl = Math.min(watch.minPttl, pttl);
    if (value !== token) {
      watch.foreign += 1;
      watch.firstForeignAtMs ??= Math.round(sentAt - start);
    }
    await pause(10);
  }
  watch.elapsedMs = Math.round(now() - start);
  return watch;
}

/** What a failed assertion about a hold should say: what the watch saw and what the lock reported. */
function explain(watch: Watch, lock: Lock): string {
  const reason = lock.signal.aborted ? (lock.signal.reason as Error).message : "not aborted";
  return `watch ${JSON.stringify(watch)}; signal: ${reason}`;
}

/** Takes the key's token straight from Redis: the lock never exposes it. */
async function tokenOf(id: string): Promise<string> {
  const token = await wire().direct.get<string>(id);
  if (typeof token !== "string") throw new Error(`expected ${id} to hold a token, got ${String(token)}`);
  return token;
}

// A run's first requests are slow (a fresh server answers NOSCRIPT and compiles each script, other
// processes are still starting): take them before anything is timed. A 5 s lease: with a 1 s one, the
// first request's wait (the lease) once ran out under a full suite's load.
beforeAll(async () => {
  const lock = new Lock({ id: uniqueId("warm-up"), redis: wire().faulty, lease: 5_000 });
  await lock.acquireOrThrow({ autoExtend: { interval: 20 } });
  await pause(100);
  await lock.release();
});

describe("auto-extend", () => {
  // 1.5 s, not less: beside four busy loops a request has taken most of a second, and a lease must
  // outlast a renewal interval plus such a stall.
  it("keeps a 1.5 s lease held through 5 s of work: the key always held the token and its PTTL never reached 0", async () => {
    const id = uniqueId("auto-extend-3s");
    const onLost = vi.fn();
    const lock = releasedAfterTest(new Lock({ id, redis: wire().faulty, lease: 1_500, onLost }));
    const before = wire().requests();
    // The default interval: a third of the lease, 500 ms.
    await lock.acquireOrThrow({ autoExtend: true });
    const renewed = () => wire().requests() - before - 1;
    // 5 s of work at the least, and on until the eighth renewal was seen: on a loaded machine the timers
    // fire late, so eight renewals may take longer than 5 s (the cap only bounds a stopped renewal loop).
    const watch = await watchKey(id, await tokenOf(id), 5_000, {
      until: () => renewed() >= 8,
      capMs: 20_000,
    });
    const renewals = renewed();

    expect(watch.foreign, explain(watch, lock)).toBe(0);
    expect(watch.minPttl, explain(watch, lock)).toBeGreaterThan(0);
    // One sample every 10-30 ms: several per renewal interval, on a loaded machine too.
    expect(watch.samples).toBeGreaterThan(50);
    // A renewal every 500 ms through the work: the lease was renewed all along, not extended once.
    expect(renewals, explain(watch, lock)).toBeGreaterThanOrEqual(8);
    expect(lock.signal.aborted).toBe(false);
    expect(lock.remainingMs).toBeGreaterThan(0);
    expect(await lock.release()).toBe(true);

    // After release, no renewal reaches the wire any more.
    const afterRelease = wire().requests();
    await pause(1_000);
    expect(wire().requests()).toBe(afterRelease);
    expect(await wire().direct.exists(id)).toBe(0);
    expect(onLost).not.toHaveBeenCalled();
    expect(unhandled()).toEqual([]);
  }, 40_000);

  it("an explicit interval renews at that pace, and disposal stops it like release", async () => {
    const id = uniqueId("auto-extend-interval");
    // A 3 s lease: its default interval, a third of it, is 1 s, ten times the explicit one.
    const lock = releasedAfterTest(new Lock({ id, redis: wire().faulty, lease: 3_000 }));
    const before = wire().requests();
    const start = now();
    await lock.acquireOrThrow({ autoExtend: { interval: 100 } });
    const renewed = () => wire().requests() - before - 1;
    // Watched until the seventh renewal arrives, however slow the machine (capped so a stopped loop fails).
    const watch = await watchKey(id, await tokenOf(id), 0, { until: () => renewed() >= 7, capMs: 10_000 });
    const elapsedMs = now() - start;
    expect(watch.foreign, explain(watch, lock)).toBe(0);
    expect(watch.minPttl, explain(watch, lock)).toBeGreaterThan(0);
    expect(renewed(), explain(watch, lock)).toBeGreaterThanOrEqual(7);
    // Renewals are sent at least an interval apart, so at the default pace the seventh could not be sent
    // before 7 x 1 s after the acquire; every 100 ms (plus any stall of a loaded machine) it came well before.
    expect(elapsedMs, explain(watch, lock)).toBeLessThan(6_900);

    await lock[Symbol.asyncDispose]();
    const afterDispose = wire().requests();
    await pause(500);
    expect(wire().requests()).toBe(afterDispose);
    expect(await wire().direct.exists(id)).toBe(0);
  });
});

describe("transient renewal failures are retried within the remaining lease", () => {
  // A lease of 1 s renewed every 200 ms leaves about 800 ms for a failed renewal to be retried.
  const hold = { lease: 1_000, autoExtend: { interval: 200 } } as const;

  async function holdThrough(
    fault: () => void,
    ms: number,
    options: { readonly lease: number; readonly autoExtend: { readonly interval: number } } = hold,
  ) {
    const id = uniqueId("transient");
    const onLost = vi.fn();
    const lock = releasedAfterTest(new Lock({ id, redis: wire().faulty, onLost }));
    await lock.acquireOrThrow(options);
    const token = await tokenOf(id);
    const before = wire().requests();
    fault();
    const watch = await watchKey(id, token, ms);
    wire().passThrough.faults.reset();
    return { lock, id, onLost, watch, requests: wire().requests() - before };
  }

  it("three 503 answers in a row: retried, not declared lost", async () => {
    const { lock, id, onLost, watch, requests } = await holdThrough(
      () => wire().passThrough.faults.status5xx(3),
      1_500,
    );
    expect(watch.foreign, explain(watch, lock)).toBe(0);
    expect(watch.minPttl, explain(watch, lock)).toBeGreaterThan(0);
    // The three failed tries came on top of the regular renewals (about seven in 1.5 s).
    expect(requests).toBeGreaterThanOrEqual(3 + 4);
    expect(lock.signal.aborted).toBe(false);
    expect(onLost).not.toHaveBeenCalled();
    expect(await lock.release()).toBe(true);
    expect(await wire().direct.exists(id)).toBe(0);
  });

  it("150 ms of latency on every request: renewals are slow but hold", async () => {
    const { lock, onLost, watch } = await holdThrough(() => wire().passThrough.faults.latency(150), 2_000);
    expect(watch.foreign, explain(watch, lock)).toBe(0);
    expect(watch.minPttl, explain(watch, lock)).toBeGreaterThan(0);
    expect(lock.signal.aborted).toBe(false);
    expect(onLost).not.toHaveBeenCalled();
    expect(await lock.release()).toBe(true);
  });

  // Renewals are scheduled from when the previous one was sent, not from its reply: were they not,
  // each round trip would push the next one later, and here (2 x 900 + 400 > 2,176 ms, the lease less
  // the drift allowance) the lock would be declared lost although every renewal succeeded in Redis. Sent
  // on schedule, a renewal goes out as the previous one is answered and is answered 1,800 ms after that
  // one's send: 376 ms inside the lease, room for a stalled event loop beside four busy loops on 2 cores
  // (a 2 s lease left 178 ms, which such a run once outran).
  it("900 ms of latency on every request, under the lease: renewals are slow but hold", async () => {
    const slow = { lease: 2_200, autoExtend: { interval: 400 } };
    const { lock, onLost, watch } = await holdThrough(
      () => wire().passThrough.faults.latency(900),
      3_000,
      slow,
    );
    expect(watch.foreign, explain(watch, lock)).toBe(0);
    expect(watch.minPttl, explain(watch, lock)).toBeGreaterThan(0);
    expect(lock.signal.aborted).toBe(false);
    expect(onLost).not.toHaveBeenCalled();
    expect(await lock.release()).toBe(true);
  });

  // A connection that swallows one request (no reply, no error) must not use up the lease: past half the
  // time left another renewal is sent. Here the stalled one only reaches Redis 5 s later.
  it("one renewal stalled on the wire: another is sent in time, and the hold goes on", async () => {
    const slow = { lease: 2_000, autoExtend: { interval: 500 } };
    const { lock, onLost, watch, requests } = await holdThrough(
      () => wire().passThrough.faults.delayNext(1, 5_000),
      3_000,
      slow,
    );
    expect(watch.foreign, explain(watch, lock)).toBe(0);
    expect(watch.minPttl, explain(watch, lock)).toBeGreaterThan(0);
    expect(lock.signal.aborted, explain(watch, lock)).toBe(false);
    expect(onLost).not.toHaveBeenCalled();
    expect(requests).toBeGreaterThanOrEqual(3);
    expect(await lock.release()).toBe(true);
    await lock.pending;
    expect(unhandled()).toEqual([]);
  }, 15_000);

  it("replies dropped after the renewal ran: the re-run renewal is harmless and the hold goes on", async () => {
    // Two drops: the client's one re-send is dropped too, so the lock's own retry has to step in.
    const { lock, onLost, watch } = await holdThrough(() => wire().passThrough.faults.dropReplies(2), 1_500);
    expect(watch.foreign, explain(watch, lock)).toBe(0);
    expect(watch.minPttl, explain(watch, lock)).toBeGreaterThan(0);
    expect(lock.signal.aborted).toBe(false);
    expect(onLost).not.toHaveBeenCalled();
    expect(await lock.release()).toBe(true);
    expect(unhandled()).toEqual([]);
  });
});
