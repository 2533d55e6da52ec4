// Review helper-151 (stop 52, 32/32 and 16/16: Lock and FairLock, over ioredis and @upstash/redis): nested
// `runExclusive` calls of one uuid share one hold. When the last of them ended and released it, the outer
// (retired) lease was told it had lost its hold ("taken": its signal aborted, `onLost` ran), whichever ended
// first, though nothing was lost: its own callers had ended. And the newer lease kept renewing at the outer
// one's auto-extend interval after the outer ended, for as long as it held (a 50 ms interval on a 30 s lease).
import { describe, expect, it } from "vitest";
import type { Lock, LockAcquireConfig } from "../../src/index";
import { uniqueId } from "../support/redis";
import { type ClientName, useBothClients } from "./support/both-clients";
import {
  clientNames,
  expectQuietEnd,
  type LockKind,
  lockKinds,
  plainAcquireInScope,
  type Scope,
  scopeKinds,
  sharedUuidCase,
} from "./support/shared-uuid";
import { pause, within } from "./support/time";

const { ioredis, clients } = useBothClients();
type Kind = LockKind;
type Inner = (lock: Lock, uuid: string) => Promise<unknown>;
/** An inner acquisition of `uuid` that ends before the hold is taken: its signal, its `onLost` given. */
type Takes = (lock: Lock, uuid: string, onLost: () => void) => Promise<AbortSignal>;

/** An inner runExclusive of `uuid` started in the outer one's work: it holds when this settles. */
type Starts = (lock: Lock, uuid: string, onLost: () => void) => Promise<{ running: Promise<unknown> }>;
const endings: [string, Starts, "held" | "released"][] = [
  [
    "the inner one ends first",
    async (lock, uuid, onLost) => {
      await lock.runExclusive(() => pause(50), { uuid, onLost });
      return { running: Promise.resolve() };
    },
    "released",
  ],
  [
    "the inner one outlives the outer one",
    (lock, uuid, onLost) =>
      new Promise((entered) => {
        const running: Promise<unknown> = lock.runExclusive(
          async () => {
            entered({ running });
            await pause(300);
          },
          { uuid, onLost },
        );
      }),
    "held",
  ],
];

/**
 * Runs `inner` inside an outer `runExclusive` of one uuid (a 30 s lease unless `outer` says otherwise), then
 * the outer work goes on a second: what it sees then, and the reasons its `onLost` was told.
 */
async function afterInner(Kind: Kind, client: ClientName, inner: Inner, outer: LockAcquireConfig = {}) {
  const id = uniqueId("retired-lease-end");
  const uuid = crypto.randomUUID();
  const lost: string[] = [];
  const lock = new Kind({ id, redis: clients[client]() });
  const seen = await lock.runExclusive(
    async (signal) => {
      await inner(lock, uuid);
      await pause(1_000);
      return { aborted: signal.aborted, key: await ioredis().get(id), left: await ioredis().pttl(id) };
    },
    { uuid, lease: 30_000, onLost: (error) => lost.push(error.reason), ...outer },
  );
  return { ...seen, lost, uuid };
}

/**
 * Runs `inner` inside an outer `runExclusive` of one uuid; once it ended, another owner takes the key, and
 * the newest lease finds it: whose `onLost` was called, and whether the outer and the inner signals aborted.
 */
async function takenAfterInner(Kind: Kind, client: ClientName, inner: Takes) {
  const id = uniqueId("retired-lease-end");
  const uuid = crypto.randomUUID();
  const lost: string[] = [];
  const lock = new Kind({ id, redis: clients[client](), lease: 5_000 });
  let innerSignal: AbortSignal | undefined;
  const outer = await lock.runExclusive(
    async (signal) => {
      innerSignal = await inner(lock, uuid, () => lost.push("inner"));
      expect(await ioredis().get(id)).toBe(uuid); // the outer work goes on under the hold
      await ioredis().set(id, "another owner");
      await lock.getStatus(); // the newest lease finds it
      await pause(50);
      return signal;
    },
    { uuid, onLost: () => lost.push("outer") },
  );
  return { lost, outer: outer.aborted, inner: innerSignal?.aborted };
}

describe.each(clientNames)("%s", (name) => {
  describe.each(lockKinds)("%s: nested runExclusive calls of one uuid", (_kind, Kind) => {
    it.each(endings)(
      "%s: no one is told a loss, and the last end releases",
      async (_ending, start, after) => {
        const id = uniqueId("retired-lease-end");
        const uuid = crypto.randomUUID();
        const lost: string[] = [];
        const lock = new Kind({ id, redis: clients[name](), lease: 2_000 });
        let inner: Promise<unknown> = Promise.resolve();
        const outerSignal = await lock.runExclusive(
          async (signal) => {
            inner = (await start(lock, uuid, () => lost.push("inner"))).running;
            return signal;
          },
          { uuid, onLost: () => lost.push("outer") },
        );
        expect(await ioredis().get(id)).toBe(after === "held" ? uuid : null); // as the outer one ends
        await inner;
        await pause(50); // a report would come with the release, before runExclusive returns
        expect({ lost, aborted: outerSignal.aborted, key: await ioredis().get(id) }).toEqual({
          lost: [],
          aborted: false,
          key: null,
        });
      },
      20_000,
    );
  });

  it.each(lockKinds)(
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
        { uuid, lease: 600, autoExtend: { interval: 50 } },
      );
      endOuter();
      // Renewed every 50 ms, the key would have about 29,950 ms left; with no renewal sent after the outer
      // ended (the inner one has no auto-extend), at most 29,000 and one renewal's round trip (a stall only
      // lowers it further).
      expect(await inner).toBeLessThanOrEqual(lease - 500);
    },
    20_000,
  );

  // The middle or newest lease's callers ended: its `onLost` is not called, but its signal tells the hold is
  // gone, as the instance's does.
  const innerShapes: [string, Takes][] = [
    [
      "a middle lease (a plain re-acquire in it is the newest)",
      (lock, uuid, onLost) =>
        lock.runExclusive(
          async (signal) => {
            expect(await lock.acquire({ uuid })).toBe(true);
            return signal;
          },
          { uuid, onLost },
        ),
    ],
    [
      "the newest lease",
      (lock, uuid, onLost) => lock.runExclusive(async (signal) => signal, { uuid, onLost }),
    ],
  ];
  describe.each(lockKinds)("%s: the outer one's hold taken", (_kind, Kind) => {
    it.each(innerShapes)(
      "%s whose callers ended calls no onLost",
      async (_shape, inner) => {
        expect(await takenAfterInner(Kind, name, inner)).toEqual({
          lost: ["outer"],
          outer: true,
          inner: true,
        });
      },
      20_000,
    );
  });

  // Renewed every 50 ms, the key would have about 29,950 ms left; with no renewal sent after the auto-extended
  // callers ended, at most 29,000 and one renewal's round trip (a stall only lowers it further).
  const renewing: [string, Inner][] = [
    [
      "a middle lease's, though a newer one holds",
      (lock, uuid) =>
        lock.runExclusive(
          async () => {
            expect(await lock.acquire({ uuid, lease: 30_000 })).toBe(true);
          },
          { uuid, lease: 600, autoExtend: { interval: 50 } },
        ),
    ],
    [
      "the newest lease's own, though an older one shares the hold",
      (lock, uuid) =>
        lock.runExclusive(() => pause(10), { uuid, lease: 30_000, autoExtend: { interval: 50 } }),
    ],
  ];
  describe.each(lockKinds)("%s: auto-extend stops when its callers end", (_kind, Kind) => {
    it.each(renewing)(
      "%s",
      async (_shape, inner) => {
        expect((await afterInner(Kind, name, inner)).left).toBeLessThanOrEqual(30_000 - 500);
      },
      20_000,
    );
  });

  // Review helper-151's suspect, confirmed: an older lease was told "taken" whatever ended the hold.
  it.each(lockKinds)(
    "%s: an older lease is told the hold expired when the newer lease's hold ran out",
    async (_kind, Kind) => {
      const id = uniqueId("retired-lease-end");
      const uuid = crypto.randomUUID();
      const reasons: string[] = [];
      const lock = new Kind({ id, redis: clients[name](), lease: 5_000 });
      const outer = await lock.runExclusive(
        async (signal) => {
          await lock.runExclusive(() => pause(1_800), {
            uuid,
            lease: 1_000, // no auto-extend, its own or inherited: the hold runs out under the work
            onLost: (error) => reasons.push(`inner ${error.reason}`),
          });
          return signal;
        },
        { uuid, lease: 1_000, onLost: (error) => reasons.push(`outer ${error.reason}`) },
      );
      expect(reasons.sort()).toEqual(["inner expired", "outer expired"]);
      expect((outer.reason as { reason?: string }).reason).toBe("expired");
    },
    20_000,
  );

  // Review helper-155 (2/2 on each version): a take never shortens its token's hold in Redis, but the newer
  // lease counted its own, shorter lease: it "expired" here under the older one's work, which was told so.
  // It reads the hold's time from Redis with its next renewal: taking the older lease's deadline instead held
  // on here after the hold was gone from Redis (review helper-156, the last case). Review helper-157 (24/24,
  // 8/8, 4/4): that renewal was lost when a third lease took the hold over before it went, or when the inner
  // lease's auto-extend stood in for it and then stopped with its callers.
  const shorter: [string, Inner][] = [
    ["an inner runExclusive", (lock, uuid) => lock.runExclusive(() => pause(100), { uuid, lease: 600 })],
    [
      "a third, plain re-acquire at once",
      (lock, uuid) => lock.runExclusive(() => lock.acquire({ uuid, lease: 600 }), { uuid, lease: 600 }),
    ],
    [
      "a third, nested runExclusive at once",
      (lock, uuid) =>
        lock.runExclusive(() => lock.runExclusive(() => pause(10), { uuid, lease: 600 }), {
          uuid,
          lease: 600,
        }),
    ],
    [
      "its own auto-extend, ended before its first renewal",
      (lock, uuid) => lock.runExclusive(() => pause(10), { uuid, lease: 600, autoExtend: { interval: 100 } }),
    ],
  ];
  describe.each(lockKinds)("%s: a shorter inner lease", (_kind, Kind) => {
    it.each(shorter)(
      "%s: the outer one's hold lasts as Redis keeps it",
      async (_shape, inner) => {
        const { lost, aborted, key, uuid } = await afterInner(Kind, name, inner);
        expect({ lost, aborted, key }).toEqual({ lost: [], aborted: false, key: uuid });
      },
      20_000,
    );
  });

  it.each(lockKinds)(
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
              await pause(1_500); // past the inner lease and its one renewal: Redis dropped the key
              return { otherTook: await other.acquire(), aborted: signal.aborted };
            },
            { uuid, lease: 600 },
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

// Review helper-159 (stop 53, 24/24): a plain `acquire({ uuid })` in a runExclusive's work shares its hold,
// which the work's end releases, silently. But once a later acquisition of the uuid had taken the hold over,
// that end told the plain one's `onLost` and signal "taken": its hold was released by the scope it was made
// in, which is no loss (the same end, with no later acquisition, tells it nothing).
// Review helper-195 (2026-12-07): the same with the scope an `await using` block on what `acquireOrThrow()`
// resolved with, and with such a block as the later acquisition: its disposal ends the caller's acquisition
// as runExclusive's end does (api.md, "One uuid, one hold"), so the plain acquire made in it is told nothing.
describe.each(clientNames)("%s: a plain acquire in a scope", (name) => {
  const laterAcquisitions: [string, (lock: Lock, uuid: string) => Promise<unknown>][] = [
    ["none", async () => {}],
    ["a plain one", (lock, uuid) => lock.acquire({ uuid })],
    ["a runExclusive", (lock, uuid) => lock.runExclusive(() => pause(10), { uuid })],
    [
      "an `await using` block",
      async (lock, uuid) => {
        await using _held = await lock.acquireOrThrow({ uuid });
        await pause(10);
      },
    ],
  ];
  describe.each(lockKinds)("%s", (_kind, Kind) => {
    describe.each(scopeKinds)("the scope: %s", (_scope, scope) => {
      it.each(laterAcquisitions)(
        "later acquisitions of the uuid: %s; the scope's end releases and tells no one a loss",
        async (_later, later) => {
          const shared = sharedUuidCase("retired-lease-end");
          const { id, uuid } = shared;
          const lock = new Kind({ id, redis: clients[name](), lease: 5_000 });
          const { plain, afterScope } = await plainAcquireInScope(
            lock,
            shared,
            () => later(lock, uuid),
            scope,
          );
          await expectQuietEnd(shared, { plain, afterScope }, () => ioredis().get(id));
        },
        20_000,
      );
    });
  });
});

// Review helper-195 (2026-12-07): two scopes of one uuid that overlap, the second outliving the first, with
// a plain acquire made in the first (before the second began, or after). api.md: the last of the scopes
// sharing the hold to end releases it, an earlier one's work never losing it to a later one's end, and the
// plain acquire made in a scope ends with the last of them, told no loss. So the hold, auto-extended by the
// second scope only, lives on past the first one's end, and the second one's end releases it, telling no one.
describe.each(clientNames)("%s: overlapping scopes of one uuid, the second outliving the first", (name) => {
  /** Starts the second scope (it makes a plain acquire of its own first, with `reacquire`): it has entered. */
  type StartSecond = (reacquire?: boolean) => Promise<void>;
  /** What the first scope's work does: the plain acquire in it, and the second scope's start. */
  const orders: [
    string,
    (plainAcquire: () => Promise<void>, startSecond: StartSecond) => Promise<unknown>,
  ][] = [
    ["the plain acquire, then the second scope", async (plain, second) => [await plain(), await second()]],
    ["the second scope, then the plain acquire", async (plain, second) => [await second(), await plain()]],
    ["the plain acquire and the second scope at once", (plain, second) => Promise.all([plain(), second()])],
    [
      "the plain acquire, then the second scope, which makes a plain acquire too",
      async (plain, second) => [await plain(), await second(true)],
    ],
    [
      "the plain acquire, then the second scope, its acquisition in flight as the first ends",
      async (plain, second) => {
        await plain();
        void second();
      },
    ],
  ];
  // The two mixed pairs put each kind of scope first and second; the same-kind pairs add no path (each scope
  // ends through the same claim either way) and 40 s to the suite.
  const pairs: [string, Scope, Scope][] = scopeKinds.flatMap(([firstName, first]) =>
    scopeKinds
      .filter(([, second]) => second !== first)
      .map(([secondName, second]): [string, Scope, Scope] => [
        `${firstName}, then ${secondName}`,
        first,
        second,
      ]),
  );
  describe.each(lockKinds)("%s", (_kind, Kind) => {
    describe.each(orders)("in the first: %s", (_order, firstWork) => {
      it.each(pairs)(
        "%s: the hold lives until the second ends, which releases it, telling no one a loss",
        async (_pair, first, second) => {
          const { id, uuid, lost, told } = sharedUuidCase("retired-lease-end");
          const lock = new Kind({ id, redis: clients[name](), lease: 5_000 });
          const signals: Record<string, AbortSignal> = {};
          let endSecond: () => void = () => {};
          const secondMayEnd = new Promise<void>((resolve) => {
            endSecond = resolve;
          });
          let secondEnded: Promise<void> = Promise.resolve();
          let secondEntered: Promise<void> = Promise.resolve();
          const plainAcquire = async (label = "plain") => {
            expect(await lock.acquire({ uuid, onLost: told(label) })).toBe(true);
            signals[label] = lock.signal;
          };
          const startSecond: StartSecond = (reacquire = false) => {
            secondEntered = new Promise<void>((entered) => {
              // Another caller's scope, not awaited by the first: it outlives it.
              secondEnded = second(
                lock,
                { uuid, lease: 1_500, autoExtend: { interval: 100 }, onLost: told("second") },
                async (signal) => {
                  signals.second = signal;
                  if (reacquire) await plainAcquire("second's plain");
                  entered();
                  await secondMayEnd;
                },
              );
            });
            return secondEntered;
          };
          await first(lock, { uuid, onLost: told("first") }, async (signal) => {
            signals.first = signal;
            await firstWork(plainAcquire, startSecond);
          });
          await within(secondEntered, 5_000, "the second scope's start");
          // Past the second scope's 1.5 s lease: its auto-extend keeps the hold it shares. Not 600 ms: one stall of
          // half a second beside busy loops would let it run out (review helper-198).
          await pause(1_700);
          const aborted = () =>
            Object.entries(signals).flatMap(([who, signal]) => (signal.aborted ? [who] : []));
          const whileSecondRuns = { lost: [...lost], aborted: aborted(), key: await ioredis().get(id) };
          endSecond();
          await within(secondEnded, 5_000, "the second scope");
          await pause(50);
          expect({ whileSecondRuns, lost, aborted: aborted(), key: await ioredis().get(id) }).toEqual({
            whileSecondRuns: { lost: [], aborted: [], key: uuid },
            lost: [],
            aborted: [],
            key: null,
          });
        },
        20_000,
      );
    });
  });
});

describe.each(clientNames)("%s: a plain acquire before a scope", (name) => {
  it.each(lockKinds)(
    "%s: the scope's end releases the hold, and the plain acquire, whose caller may be at work, is told",
    async (_kind, Kind) => {
      const { id, uuid, lost, told } = sharedUuidCase("retired-lease-end");
      const lock = new Kind({ id, redis: clients[name](), lease: 5_000 });
      expect(await lock.acquire({ uuid, onLost: told("plain") })).toBe(true);
      const plainSignal = lock.signal;
      await lock.runExclusive(() => pause(10), { uuid });
      await pause(50);
      expect({ lost, aborted: plainSignal.aborted, key: await ioredis().get(id) }).toEqual({
        lost: ["plain taken"],
        aborted: true,
        key: null,
      });
    },
    20_000,
  );
});
