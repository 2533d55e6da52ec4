// Fencing tokens increase strictly in the order the lock was held: across processes, and across a
// Redis restart with or without persistence.
import { describe, expect, it } from "vitest";
import { Lock } from "../../src/index";
import { companionKey } from "../../src/keys";
import { lastJsonLine, runTypeScript } from "../support/node-process";
import { uniqueId } from "../support/redis";
import { clientFor, type Endpoint, usePrivateStack } from "./support/endpoints";

/** The fencing counter of the lock on `key`, beside it in its hash slot. */
const fenceKey = (key: string) => companionKey(key, ":fence");

/** Asserts every token is larger than the one before; returns how many distinct tokens there are. */
function expectStrictlyIncreasing(tokens: readonly string[]): number {
  const values = tokens.map((token) => BigInt(token));
  const firstViolation = values.findIndex((value, i) => i > 0 && value <= (values[i - 1] as bigint));
  expect(firstViolation, `token #${firstViolation} is not larger than the one before`).toBe(-1);
  return new Set(tokens).size;
}

describe("fencing tokens from 4 processes", () => {
  // A stack of its own: four processes polling for the lock would otherwise slow the shared proxy,
  // and with it the timing-sensitive tests of other files.
  const stack = usePrivateStack();

  it("1,000 acquisitions (4 x 250): the tokens, in holding order, are strictly increasing and distinct", async () => {
    const endpoint = stack().endpoint;
    const lockId = uniqueId("fencing-processes");
    const listKey = `${lockId}:tokens`;
    const workers = Array.from({ length: 4 }, (_, worker) =>
      runTypeScript(
        new URL("./fixtures/fencing-worker.ts", import.meta.url),
        {
          UPSTASH_URL: endpoint.url,
          UPSTASH_TOKEN: endpoint.token,
          LOCK_ID: lockId,
          LIST_KEY: listKey,
          ACQUISITIONS: "250",
          WORKER: String(worker),
        },
        150_000,
      ),
    );
    const outputs = await Promise.all(workers);
    expect(outputs.map(({ stdout }) => lastJsonLine<{ done: number }>(stdout).done)).toEqual([
      250, 250, 250, 250,
    ]);

    const raw = clientFor(endpoint, { automaticDeserialization: false });
    const entries = (await raw.lrange<string>(listKey, 0, -1)).map((entry) => entry.split(" "));
    const tokens = entries.map(([token]) => token ?? "");
    expect(tokens).toHaveLength(1_000);
    expect(expectStrictlyIncreasing(tokens)).toBe(1_000);
    // The processes really took turns, rather than running one after another.
    const handovers = entries.filter(([, worker], i) => i > 0 && worker !== entries[i - 1]?.[1]).length;
    expect(handovers).toBeGreaterThan(3 * 10);
    expect(await raw.exists(lockId)).toBe(0);
    await raw.del(listKey, fenceKey(lockId));
  }, 180_000);
});

/** Takes the lock with fencing, releases it, and returns the token it got. */
async function fencedAcquisition(endpoint: Endpoint, id: string, clockFloor?: boolean): Promise<number> {
  const fencing = clockFloor === undefined ? true : { clockFloor };
  const lock = new Lock({ id, redis: clientFor(endpoint), fencing });
  await lock.acquireOrThrow({ retry: { attempts: 50, delay: 100 } });
  const token = lock.fencingToken;
  if (token === undefined) throw new Error("no fencing token");
  expect(await lock.release()).toBe(true);
  return token;
}

describe("fencing tokens across a Redis restart, with persistence (AOF)", () => {
  const stack = usePrivateStack(["--appendonly", "yes"]);

  it.each([
    ["the counter alone (Upstash's default)", undefined],
    ["the clock floor", true],
  ])("%s: the counter survives the restart, and the token after it is larger", async (_name, clockFloor) => {
    const id = uniqueId("fencing-aof");
    const before = await fencedAcquisition(stack().endpoint, id, clockFloor);
    await stack().redis.restart();
    const raw = clientFor(stack().endpoint, { automaticDeserialization: false });
    expect(await raw.get(fenceKey(id))).toBe(String(before));
    const after = await fencedAcquisition(stack().endpoint, id, clockFloor);
    expect(after).toBeGreaterThan(before);
  });
});

describe("fencing tokens across a Redis restart, without persistence", () => {
  const stack = usePrivateStack();

  it("with the clock floor, the counter is lost in the restart, and the token after it is still larger: never below Redis's clock in µs", async () => {
    const id = uniqueId("fencing-no-persistence");
    const before = await fencedAcquisition(stack().endpoint, id, true);
    await stack().redis.restart();
    const raw = clientFor(stack().endpoint, { automaticDeserialization: false });
    // Proof that this is the no-persistence case: nothing of the old counter is left.
    expect(await raw.exists(fenceKey(id))).toBe(0);
    const after = await fencedAcquisition(stack().endpoint, id, true);
    expect(after).toBeGreaterThan(before);
    // The token is Redis's clock in microseconds (within a minute of this process's clock).
    expect(Math.abs(after / 1_000 - Date.now())).toBeLessThan(60_000);
  });

  it("without it, the counter alone starts over: why the clock floor exists where data is not kept", async () => {
    const id = uniqueId("fencing-no-persistence-counter");
    await fencedAcquisition(stack().endpoint, id, false);
    const before = await fencedAcquisition(stack().endpoint, id, false);
    await stack().redis.restart();
    const after = await fencedAcquisition(stack().endpoint, id, false);
    expect([before, after]).toEqual([2, 1]);
  });
});
