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
});
