// Review helper-151 (stop 52, 32/32 and 16/16: Lock and FairLock, over ioredis and @upstash/redis): nested
// `runExclusive` calls of one uuid share one hold. When the last of them ended and released it, the outer
// (retired) lease was told it had lost its hold ("taken": its signal aborted, `onLost` ran), whichever ended
// first, though nothing was lost: its own callers had ended. And the newer lease kept renewing at the outer
// one's auto-extend interval after the outer ended, for as long as it held (a 50 ms interval on a 30 s lease).
import { Redis as IoRedis } from "ioredis";
import { afterAll, describe, expect, it } from "vitest";
import { FairLock, Lock, type RedisClient } from "../../src/index";
import { uniqueId } from "../support/redis";
import { clientFor, usePrivateStack } from "./support/endpoints";
import { pause } from "./support/time";

const stack = usePrivateStack();
const opened: IoRedis[] = [];
afterAll(() => {
  for (const client of opened) client.disconnect();
});
const ioredis = (): IoRedis => {
  const client = new IoRedis(stack().redis.url);
  client.on("error", () => {});
  opened.push(client);
  return client;
};
const clients: Record<"ioredis" | "upstash", () => RedisClient> = {
  ioredis,
  upstash: () => clientFor(stack().endpoint),
};
const kinds = [
  ["Lock", Lock],
  ["FairLock", FairLock],
] as const;

describe.each(["ioredis", "upstash"] as const)("%s", (name) => {
  it.each(kinds)(
    "%s: nested runExclusive calls of one uuid that end in turn tell no one a loss",
    async (_kind, Kind) => {
      const id = uniqueId("retired-lease-end");
      const uuid = crypto.randomUUID();
      const lost: string[] = [];
      const lock = new Kind({ id, redis: clients[name](), lease: 2_000 });
      const outerSignal = await lock.runExclusive(
        async (signal) => {
          await lock.runExclusive(() => pause(50), { uuid, onLost: () => lost.push("inner") });
          return signal;
        },
        { uuid, onLost: () => lost.push("outer") },
      );
      await pause(50); // a report would come with the release, before runExclusive returns
      expect({ lost, aborted: outerSignal.aborted, key: await ioredis().get(id) }).toEqual({
        lost: [],
        aborted: false,
        key: null,
      });
    },
    20_000,
  );

  it.each(kinds)(
    "%s: an inner runExclusive that outlives the outer one tells the outer no loss at its end",
    async (_kind, Kind) => {
      const id = uniqueId("retired-lease-end");
      const uuid = crypto.randomUUID();
      const lost: string[] = [];
      const lock = new Kind({ id, redis: clients[name](), lease: 2_000 });
      let inner: Promise<unknown> = Promise.resolve();
      const outerSignal = await lock.runExclusive(
        async (signal) => {
          // The inner one holds (took the hold over) before the outer ends.
          await new Promise<void>((entered) => {
            inner = lock.runExclusive(
              async () => {
                entered();
                await pause(300);
              },
              { uuid, onLost: () => lost.push("inner") },
            );
          });
          return signal;
        },
        { uuid, onLost: () => lost.push("outer") },
      );
      expect(await ioredis().get(id)).toBe(uuid); // the inner one's work still runs under the hold
      await inner;
      await pause(50);
      expect({ lost, aborted: outerSignal.aborted, key: await ioredis().get(id) }).toEqual({
        lost: [],
        aborted: false,
        key: null,
      });
    },
    20_000,
  );

  it.each(kinds)(
    "%s: a hold taken over from an auto-extended one stops its renewals when that one's callers ended",
    async (_kind, Kind) => {
      const id = uniqueId("retired-lease-end");
      const uuid = crypto.randomUUID();
      const lock = new Kind({ id, redis: clients[name]() });
      const lease = 30_000;
      let inner: Promise<number> = Promise.resolve(0);
      let endOuter: () => void = () => {};
      const outerEnded = new Promise<void>((resolve) => {
        endOuter = resolve;
      });
      await lock.runExclusive(
        async () => {
          await new Promise<void>((entered) => {
            inner = lock.runExclusive(
              async () => {
                entered();
                await outerEnded;
                await pause(1_000);
                return ioredis().pttl(id);
              },
              { uuid, lease },
            );
          });
        },
        { uuid, lease: 300, autoExtend: { interval: 50 } },
      );
      endOuter();
      // Renewed every 50 ms, the key would have about 29,950 ms left; with no renewal sent after the outer
      // ended (the inner one has no auto-extend), at most 29,000 and one renewal's round trip (a stall only
      // lowers it further).
      expect(await inner).toBeLessThanOrEqual(lease - 500);
    },
    20_000,
  );

  it.each(kinds)(
    "%s: a middle lease whose callers ended calls no onLost when the outer one's hold is taken",
    async (_kind, Kind) => {
      const id = uniqueId("retired-lease-end");
      const uuid = crypto.randomUUID();
      const lost: string[] = [];
      const lock = new Kind({ id, redis: clients[name](), lease: 5_000 });
      let middle: AbortSignal | undefined;
      const outer = await lock.runExclusive(
        async (signal) => {
          await lock.runExclusive(
            async (inner) => {
              middle = inner;
              expect(await lock.acquire({ uuid })).toBe(true); // a plain re-acquire, newest of the three
            },
            { uuid, onLost: () => lost.push("middle") },
          );
          expect(await ioredis().get(id)).toBe(uuid); // the outer work goes on under the hold
          await ioredis().set(id, "another owner");
          await lock.getStatus(); // the newest lease finds it
          await pause(50);
          return signal;
        },
        { uuid, onLost: () => lost.push("outer") },
      );
      // The middle one's signal tells the hold is gone (as the instance's does); its onLost is not called.
      expect({ lost, outer: outer.aborted, middle: middle?.aborted }).toEqual({
        lost: ["outer"],
        outer: true,
        middle: true,
      });
    },
    20_000,
  );

  it.each(kinds)(
    "%s: a middle lease's auto-extend stops when its callers end, though a newer one holds",
    async (_kind, Kind) => {
      const id = uniqueId("retired-lease-end");
      const uuid = crypto.randomUUID();
      const lock = new Kind({ id, redis: clients[name]() });
      const lease = 30_000;
      const left = await lock.runExclusive(
        async () => {
          await lock.runExclusive(
            async () => {
              expect(await lock.acquire({ uuid, lease })).toBe(true);
            },
            { uuid, lease: 300, autoExtend: { interval: 50 } },
          );
          await pause(1_000);
          return ioredis().pttl(id);
        },
        { uuid, lease },
      );
      expect(left).toBeLessThanOrEqual(lease - 500); // see the first renewal case
    },
    20_000,
  );

  it.each(kinds)(
    "%s: the newest lease's own auto-extend stops when its callers end, though an older one shares the hold",
    async (_kind, Kind) => {
      const id = uniqueId("retired-lease-end");
      const uuid = crypto.randomUUID();
      const lock = new Kind({ id, redis: clients[name]() });
      const lease = 30_000;
      const left = await lock.runExclusive(
        async () => {
          await lock.runExclusive(() => pause(10), { uuid, lease, autoExtend: { interval: 50 } });
          await pause(1_000);
          return ioredis().pttl(id);
        },
        { uuid, lease },
      );
      expect(left).toBeLessThanOrEqual(lease - 500);
    },
    20_000,
  );

  it.each(kinds)(
    "%s: the newest lease whose callers ended calls no onLost when the older one's hold is taken",
    async (_kind, Kind) => {
      const id = uniqueId("retired-lease-end");
      const uuid = crypto.randomUUID();
      const lost: string[] = [];
      const lock = new Kind({ id, redis: clients[name](), lease: 5_000 });
      let inner: AbortSignal | undefined;
      const outer = await lock.runExclusive(
        async (signal) => {
          await lock.runExclusive(
            (own) => {
              inner = own;
            },
            { uuid, onLost: () => lost.push("inner") },
          );
          await ioredis().set(id, "another owner");
          await lock.getStatus();
          await pause(50);
          return signal;
        },
        { uuid, onLost: () => lost.push("outer") },
      );
      expect({ lost, outer: outer.aborted, inner: inner?.aborted }).toEqual({
        lost: ["outer"],
        outer: true,
        inner: true,
      });
    },
    20_000,
  );

  // Review helper-151's suspect, confirmed: an older lease was told "taken" whatever ended the hold.
  it.each(kinds)(
    "%s: an older lease is told the hold expired when the newer lease's hold ran out",
    async (_kind, Kind) => {
      const id = uniqueId("retired-lease-end");
      const uuid = crypto.randomUUID();
      const reasons: string[] = [];
      const lock = new Kind({ id, redis: clients[name](), lease: 5_000 });
      const outer = await lock.runExclusive(
        async (signal) => {
          await lock.runExclusive(() => pause(900), {
            uuid,
            lease: 500, // no auto-extend, its own or inherited: the hold runs out under the work
            onLost: (error) => reasons.push(`inner ${error.reason}`),
          });
          return signal;
        },
        { uuid, lease: 500, onLost: (error) => reasons.push(`outer ${error.reason}`) },
      );
      expect(reasons.sort()).toEqual(["inner expired", "outer expired"]);
      expect((outer.reason as { reason?: string }).reason).toBe("expired");
    },
    20_000,
  );

  // Review helper-155 (2/2 on each version): a take never shortens its token's hold in Redis, but the newer
  // lease counted its own, shorter lease: it "expired" here under the older one's work, which was told so.
  // It reads the hold's time from Redis halfway through its lease (one renewal): taking the older lease's
  // deadline instead held on here after the hold was gone from Redis (review helper-156, next case).
  it.each(kinds)(
    "%s: a shorter inner lease of the uuid leaves the outer one's hold as long as Redis keeps it",
    async (_kind, Kind) => {
      const id = uniqueId("retired-lease-end");
      const uuid = crypto.randomUUID();
      const lost: string[] = [];
      const lock = new Kind({ id, redis: clients[name]() });
      const seen = await lock.runExclusive(
        async (signal) => {
          await lock.runExclusive(() => pause(100), { uuid, lease: 300 });
          await pause(1_000); // past the inner lease, well within the outer one's
          return { aborted: signal.aborted, key: await ioredis().get(id) };
        },
        { uuid, lease: 30_000, onLost: (error) => lost.push(error.reason) },
      );
      expect({ lost, ...seen }).toEqual({ lost: [], aborted: false, key: uuid });
    },
    20_000,
  );

  // Review helper-157 (24/24, 8/8, 4/4): the renewal that reads the hold was lost when a third lease took the
  // hold over before it went, or when the inner lease's auto-extend (or the outer one's, inherited) stood in
  // for it and then stopped with its callers.
  const shapes: [string, (lock: Lock, uuid: string) => Promise<unknown>][] = [
    [
      "a third, plain re-acquire at once",
      (lock, uuid) => lock.runExclusive(() => lock.acquire({ uuid, lease: 300 }), { uuid, lease: 300 }),
    ],
    [
      "a third, nested runExclusive at once",
      (lock, uuid) =>
        lock.runExclusive(() => lock.runExclusive(() => pause(10), { uuid, lease: 300 }), {
          uuid,
          lease: 300,
        }),
    ],
    [
      "its own auto-extend, ended before its first renewal",
      (lock, uuid) => lock.runExclusive(() => pause(10), { uuid, lease: 300, autoExtend: { interval: 100 } }),
    ],
  ];
  describe.each(kinds)("%s: a shorter inner lease, then", (_kind, Kind) => {
    it.each(shapes)(
      "%s: the outer one's hold lasts as Redis keeps it",
      async (_shape, inner) => {
        const id = uniqueId("retired-lease-end");
        const uuid = crypto.randomUUID();
        const lost: string[] = [];
        const lock = new Kind({ id, redis: clients[name]() });
        const seen = await lock.runExclusive(
          async (signal) => {
            await inner(lock, uuid);
            await pause(1_000);
            return { aborted: signal.aborted, key: await ioredis().get(id) };
          },
          { uuid, lease: 30_000, onLost: (error) => lost.push(error.reason) },
        );
        expect({ lost, ...seen }).toEqual({ lost: [], aborted: false, key: uuid });
      },
      20_000,
    );
  });

  it.each(kinds)(
    "%s: a shorter inner lease whose take found the outer one's hold gone ends as Redis drops the key",
    async (_kind, Kind) => {
      const id = uniqueId("retired-lease-end");
      const uuid = crypto.randomUUID();
      const lock = new Kind({ id, redis: clients[name]() });
      const other = new Kind({ id, redis: clients[name](), retry: { attempts: 1 } });
      const seen = await lock.runExclusive(
        async () => {
          await ioredis().del(id); // gone unseen here: another process of the uuid released it, say
          return lock.runExclusive(
            async (signal) => {
              await pause(1_000); // past the inner lease and its one renewal: Redis dropped the key
              return { otherTook: await other.acquire(), aborted: signal.aborted };
            },
            { uuid, lease: 300 },
          );
        },
        { uuid, lease: 30_000 },
      );
      await other.release();
      expect(seen).toEqual({ otherTook: true, aborted: true });
    },
    20_000,
  );
});
