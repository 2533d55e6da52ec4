// What a semaphore's or fair lock's store sends for each operation, and how it reads each reply. A scripted
// runner stands in for Redis: the scripts run against a real redis-server in test/semaphore and test/faults.
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { companionKey, FENCE_COUNTER_LIFETIME_MS } from "../../../src/keys";
import { extendPermit, releasePermit, renewPermit, takePermit } from "../../../src/permits/scripts";
import { permitStore } from "../../../src/permits/store";
import type { ServerKind } from "../../../src/redis/server";
import { scriptedTarget } from "../support/scripted-target";

const NOW = 1_700_000_000_000;
beforeEach(() => {
  vi.useFakeTimers({ toFake: ["Date"] });
  vi.setSystemTime(NOW);
});
afterEach(() => {
  vi.useRealTimers();
});

const LINE = [":queue", ":queue-deadlines", ":queue-places", ":fence", ":receipts"].map((suffix) =>
  companionKey("k", suffix),
);

/** A store on "k" answering with `replies` in turn: a semaphore of `limit` permits, or a fair lock. */
function storeAnswering(
  limit: number | "lock-key",
  replies: Parameters<typeof scriptedTarget>[0],
  server?: ServerKind,
) {
  const { target, sent } = scriptedTarget(replies, server);
  return { store: permitStore(limit, limit === "lock-key")(target), sent };
}

const take = (extra: object = {}) => ({
  token: "tok",
  nonce: "n1",
  lease: 5_000,
  fencing: undefined,
  ...extra,
});

describe("a permit store's take", () => {
  it("sends every permit's key after the line's, and reads the permit taken", async () => {
    const { store, sent } = storeAnswering(2, [[1, 2, 0, 0, 1, -1]]);
    expect(await store.take(take())).toEqual({
      kind: "acquired",
      permit: 2,
      fencingToken: undefined,
      hold: "n1",
      kept: true,
      pttl: undefined,
    });
    expect(sent).toEqual([
      {
        script: takePermit,
        keys: [...LINE, companionKey("k", ":permit:1"), companionKey("k", ":permit:2")],
        args: ["tok", "n1", 5_000, "k", "0", "", 0, 0, "0", 0, "", 5_000 + FENCE_COUNTER_LIFETIME_MS],
      },
    ]);
  });

  it("a fair lock's try carries its entry in line, and reads its place, or the grant it confirmed", async () => {
    const queue = { member: "w1:2500:tok", now: NOW, entryMs: 2_500, lastTry: true };
    const { store, sent } = storeAnswering("lock-key", [
      [0, 800, 3, 7],
      [1, 1, 0, 1, 1, 1_900],
    ]);
    expect(await store.take(take({ queue }))).toEqual({ kind: "held", pttl: 800, ahead: 3, place: 7 });
    // Place 1 on an acquisition: it held by the grant a release made to its name in line.
    expect(await store.take(take({ queue }))).toMatchObject({ kind: "acquired", hold: "w1", pttl: 1_900 });
    expect(sent[0]?.keys).toEqual([...LINE, "k"]);
    expect(sent[0]?.args.slice(3, 9)).toEqual(["k", "1", "w1:2500:tok", NOW, 2_500, "1"]);
  });

  it("fences by the clock off Upstash and by the counter on it, and reads the token", async () => {
    const onRedis = storeAnswering(1, [[1, 1, 42, 0, 0]]);
    expect(await onRedis.store.take(take({ fencing: { clockFloor: undefined } }))).toMatchObject({
      fencingToken: 42,
    });
    const onUpstash = storeAnswering(1, [[1, 1, 43, 0, 0]], "upstash");
    await onUpstash.store.take(take({ fencing: { clockFloor: undefined } }));
    expect([onRedis.sent[0]?.args[10], onUpstash.sent[0]?.args[10]]).toEqual(["clock", "count"]);
  });
});

describe("a permit store's calls on a hold", () => {
  it("release and undo send the release script, the release with its permit, lease and hold", async () => {
    const { store, sent } = storeAnswering(2, [[1], [0]]);
    expect(await store.release("tok", 5_000, 2, { id: "c1", hold: "n1" })).toBe(true);
    await store.undo("tok", "n2", 5_000);
    expect(sent.map(({ script, args }) => [script, args])).toEqual([
      [releasePermit, ["tok", "c1", "0", "k", "0", "", NOW, 2, 5_000, "n1"]],
      [releasePermit, ["tok", "n2", "1", "k", "0", "", NOW]],
    ]);
  });

  it("extend, renew and status name the permit and read {held, pttl, permit}", async () => {
    const { store, sent } = storeAnswering(2, [
      [1, 6_000],
      [0, -2],
      [1, 5_000, 2],
    ]);
    expect(await store.extend("tok", 1_000, 5_000, 1, { id: "c1", hold: "n1" })).toEqual({
      held: true,
      pttl: 6_000,
      permit: undefined,
    });
    expect(await store.renew("tok", 5_000, 1, false, "n1")).toEqual({ held: false, pttl: -2 });
    expect(await store.status("tok", 5_000, undefined, true, "")).toEqual({
      held: true,
      pttl: 5_000,
      permit: 2,
    });
    expect(sent.map(({ script, args }) => [script, args])).toEqual([
      [extendPermit, ["tok", "c1", 1_000, 1, 5_000, "n1"]],
      [renewPermit, ["tok", 5_000, 1, 0, "n1"]],
      [renewPermit, ["tok", 0, 0, 1, ""]],
    ]);
  });
});
