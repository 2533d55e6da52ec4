// What a single-Redis lock store sends for each operation, and how it reads each reply. A scripted runner
// stands in for Redis: the scripts themselves run against a real redis-server in test/lock and test/faults.
import { afterEach, describe, expect, it, vi } from "vitest";
import { LockRedisError } from "../../src/errors";
import { newCallId } from "../../src/ids";
import { keyStore } from "../../src/key-store";
import { companionKey, FENCE_COUNTER_LIFETIME_MS } from "../../src/keys";
import type { ServerKind } from "../../src/redis/server";
import {
  extendLock,
  releaseLock,
  renewLock,
  takeLock,
  takeLockClockFence,
  takeLockCountedFence,
} from "../../src/scripts/lock";
import { scriptedTarget } from "./support/scripted-target";

afterEach(() => {
  vi.useRealTimers();
});

/** A key store on "k" answering with `replies` in turn (see {@link scriptedTarget}). */
function storeAnswering(replies: Parameters<typeof scriptedTarget>[0], server?: ServerKind) {
  const { target, sent } = scriptedTarget(replies, server);
  return { store: keyStore(target), sent };
}

const TOKEN = "tok-5ecret";
const [GRANT, RECEIPT, FENCE] = [":grant", ":receipt", ":fence"].map((suffix) => companionKey("k", suffix));
const take = (fencing?: { clockFloor: boolean | undefined }) => ({
  token: TOKEN,
  nonce: "n1",
  lease: 5_000,
  fencing,
});

describe("a key store's take", () => {
  it("sends the plain script on the lock and grant keys, and reads an acquisition", async () => {
    const { store, sent } = storeAnswering([[1, -1, 0]]);
    expect(await store.take(take())).toEqual({
      kind: "acquired",
      fencingToken: undefined,
      permit: 1,
      hold: "n1",
      kept: false,
    });
    expect(sent).toEqual([{ script: takeLock, keys: ["k", GRANT], args: [TOKEN, "n1", 5_000] }]);
  });

  it("fences with a clock floor off Upstash (the counter then expires), with a counter alone on it", async () => {
    const onRedis = storeAnswering([[1, 42, 1]]);
    expect(await onRedis.store.take(take({ clockFloor: undefined }))).toMatchObject({
      fencingToken: 42,
      kept: true,
    });
    expect(onRedis.sent[0]).toEqual({
      script: takeLockClockFence,
      keys: ["k", GRANT, FENCE],
      args: [TOKEN, "n1", 5_000, 5_000 + FENCE_COUNTER_LIFETIME_MS],
    });
    const onUpstash = storeAnswering([[1, 7, 0]], "upstash");
    await onUpstash.store.take(take({ clockFloor: undefined }));
    expect(onUpstash.sent[0]).toMatchObject({ script: takeLockCountedFence, args: [TOKEN, "n1", 5_000] });
  });

  it("reads a holder's lease left, and a hold by a later try of its token as 'go again after it'", async () => {
    const { store } = storeAnswering([
      [0, 1_234],
      [0, -3, 9e15],
    ]);
    expect(await store.take(take())).toEqual({ kind: "held", pttl: 1_234 });
    expect(await store.take(take())).toEqual({ kind: "held", pttl: -1, after: true });
    // The next request id's order (base-36 µs) comes after the taker's named order (a Lamport step).
    const order = Number.parseInt(newCallId().split("-")[0] as string, 36);
    expect(order).toBeGreaterThan(9e15);
  });

  it("turns a failure into a LockRedisError whose message and cause never show the token", async () => {
    const cause = new Error(`WRONGTYPE Operation against a key holding the wrong kind of value ${TOKEN}`);
    const { store } = storeAnswering([cause]);
    const error = await store.take(take()).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(LockRedisError);
    const { cause: kept, refused, message } = error as LockRedisError;
    // The cause is kept as a copy that names the token `<token>`: errors get logged.
    expect({ refused, cause: (kept as Error).message, message }).toEqual({
      refused: true,
      cause: "WRONGTYPE Operation against a key holding the wrong kind of value <token>",
      message: expect.not.stringContaining(TOKEN),
    });
  });
});

describe("a key store's calls on a hold", () => {
  it("release names its own call id and the hold it ends, and reads 1 as released", async () => {
    const { store, sent } = storeAnswering([[1], [0]]);
    expect(await store.release("tok", 5_000, 1, { id: "c1", hold: "n1" })).toBe(true);
    expect(await store.release("tok", 5_000, 1, { id: "c2", hold: "n1" })).toBe(false);
    expect(sent[0]).toEqual({
      script: releaseLock,
      keys: ["k", RECEIPT, GRANT],
      args: ["tok", "c1", "0", 5_000, "n1"],
    });
  });

  it("extend, renew and status read {held, pttl}; -2 and 0 as not held", async () => {
    const { store, sent } = storeAnswering([
      [1, 6_000],
      [0, -2],
      [1, 5_000],
    ]);
    expect(await store.extend("tok", 1_000, 5_000, 1, { id: "c1", hold: "n1" })).toEqual({
      held: true,
      pttl: 6_000,
      permit: undefined,
    });
    expect(await store.renew("tok", 5_000, 1, false, "n1")).toEqual({ held: false, pttl: -2 });
    expect(await store.status("tok", 5_000, 1, true, "")).toMatchObject({ held: true, pttl: 5_000 });
    expect(sent.map(({ script, keys, args }) => [script, keys, args])).toEqual([
      [extendLock, ["k", RECEIPT, GRANT], ["tok", "c1", 1_000, 5_000, "n1"]],
      [renewLock, ["k", GRANT], ["tok", 5_000, "0", "n1"]],
      [renewLock, ["k", GRANT], ["tok", 0, "1", ""]],
    ]);
  });

  it("an undo is sent again after an error of the moment, not after a refusal, and never rejects", async () => {
    vi.useFakeTimers();
    const again = storeAnswering([new Error("READONLY You can't write against a read only replica."), [0]]);
    const undone = again.store.undo("tok", "n1", 5_000);
    await vi.advanceTimersByTimeAsync(100);
    await undone;
    expect(again.sent.map(({ script, args }) => [script, args])).toEqual([
      [releaseLock, ["tok", "n1", "1"]],
      [releaseLock, ["tok", "n1", "1"]],
    ]);
    const refused = storeAnswering([new Error("ERR Error running script: bad")]);
    await refused.store.undo("tok", "n1", 5_000);
    expect(refused.sent).toHaveLength(1);
  });
});
