// Review helper-133 (stop 50: 12/12 on a Lock over ioredis and @upstash/redis, 4/4 with runExclusive, 4/4 on
// a Semaphore): a same-uuid acquire whose try this process stalled over (a long GC pause, a starved CPU),
// and whose timeout then ran out, reported the uuid's live hold lost ("taken"): the signal aborted, auto-extend
// stopped, and the key was left to expire under nobody. No answer of Redis's named another holder: a try read
// after its lease was of use is undone and counts as this process's stall, not as a holder.
import { Redis as IoRedis } from "ioredis";
import { afterAll, describe, expect, inject, it } from "vitest";
import { Lock, type RedisClient, Semaphore } from "../../src/index";
import { uniqueId } from "../support/redis";
import { clientFor, sharedEndpoint } from "./support/endpoints";

const opened: IoRedis[] = [];
afterAll(() => {
  for (const client of opened) client.disconnect();
});
const ioredis = () => {
  const client = new IoRedis(inject("redisUrl"));
  opened.push(client);
  return client;
};

/** Blocks this process for `ms`, as a long GC pause would. */
function stall(ms: number): void {
  const end = performance.now() + ms;
  while (performance.now() < end) {
    // busy
  }
}

/**
 * A client whose next request, once armed (with `needle`: the next whose arguments name it), is followed by a
 * stall of 600 ms, past its lease, before its answer can be read: right after the client was handed the
 * command (ioredis writes it then; fetch a tick later).
 */
function stallingClient(name: "ioredis" | "upstash"): {
  redis: RedisClient;
  armed: <T>(next: () => Promise<T>, needle?: string) => Promise<T>;
} {
  let arm: string | undefined;
  const stallOnce = (args: unknown) => {
    if (arm === undefined || !JSON.stringify(args).includes(arm)) return;
    arm = undefined;
    stall(600);
  };
  const armed = <T>(next: () => Promise<T>, needle = "") => {
    arm = needle;
    return next();
  };
  if (name === "upstash") {
    const redis = clientFor(sharedEndpoint());
    const http = (redis as unknown as { client: { request: (...args: unknown[]) => Promise<unknown> } })
      .client;
    const request = http.request.bind(http);
    http.request = (...args) => {
      const answer = request(...args);
      stallOnce(args);
      return answer;
    };
    return { redis, armed };
  }
  const redis = ioredis();
  const send = redis.sendCommand.bind(redis);
  redis.sendCommand = (...args: Parameters<IoRedis["sendCommand"]>) => {
    const sent = send(...args);
    stallOnce(args[0].args);
    return sent;
  };
  return { redis, armed };
}

describe.each(["ioredis", "upstash"] as const)("%s", (name) => {
  it("a Lock: the hold stays live, with its renewals, when a same-uuid acquire stalled and timed out", async () => {
    const id = uniqueId("stalled-same-uuid");
    const uuid = crypto.randomUUID();
    const lost: unknown[] = [];
    const { redis, armed } = stallingClient(name);
    const lock = new Lock({ id, redis, lease: 3_000, onLost: (error) => lost.push(error) });
    const scope = await lock.acquireOrThrow({ uuid, autoExtend: true });
    const { signal } = scope;
    const again = await armed(() => lock.acquire({ uuid, lease: 200, timeout: 300 }));
    const holder = await ioredis().get(id);
    await lock.release().catch(() => false);
    expect({ again, aborted: signal.aborted, lost, holder }).toEqual({
      again: false,
      aborted: false,
      lost: [],
      holder: uuid,
    });
  });

  it("runExclusive's work keeps its signal when a same-uuid acquireOrThrow stalled and timed out", async () => {
    const id = uniqueId("stalled-same-uuid-run");
    const uuid = crypto.randomUUID();
    const { redis, armed } = stallingClient(name);
    const lock = new Lock({ id, redis, lease: 3_000 });
    let started!: () => void;
    let finish!: () => void;
    const running = new Promise<void>((resolve) => (started = resolve));
    const done = new Promise<void>((resolve) => (finish = resolve));
    const run = lock.runExclusive(
      async (signal) => {
        started();
        await done;
        return signal.aborted;
      },
      { uuid, autoExtend: true },
    );
    await running;
    const again = await armed(() =>
      lock.acquireOrThrow({ uuid, lease: 200, timeout: 300 }).catch((error) => error.reason),
    );
    finish();
    expect({ again, abortedInWork: await run }).toEqual({ again: "timeout", abortedInWork: false });
  });

  it("a Semaphore: the permit's lease stays live when a same-uuid acquire stalled and timed out", async () => {
    const id = uniqueId("stalled-same-uuid-sem");
    const uuid = crypto.randomUUID();
    const { redis, armed } = stallingClient(name);
    const semaphore = new Semaphore({ id, redis, limit: 1, lease: 3_000 });
    const lease = await semaphore.acquire({ uuid, autoExtend: true });
    if (!lease) throw new Error("the permit was not acquired");
    const again = await armed(() => semaphore.acquire({ uuid, lease: 200, timeout: 300 }));
    const aborted = lease.signal.aborted;
    await lease.release().catch(() => false);
    expect({ again, aborted }).toEqual({ again: undefined, aborted: false });
  });

  // Review helper-135 (stop 50, 3/3): a caller that waited for a holder here, then had the turn and stalled
  // over its own try, was told "another caller of this instance held it or was acquiring it".
  it("a caller that had the turn here and then stalled over its own try is told it stalled", async () => {
    const { redis, armed } = stallingClient(name);
    const lock = new Lock({ id: uniqueId("stalled-after-turn"), redis, lease: 3_000 });
    expect(await lock.acquire()).toBe(true);
    const uuid = crypto.randomUUID();
    const waiting = armed(
      () => lock.acquireOrThrow({ uuid, lease: 200, timeout: 500 }).catch((error: Error) => error),
      uuid,
    );
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(await lock.release()).toBe(true);
    const failure = await waiting;
    await lock.release().catch(() => false);
    expect(failure).toMatchObject({ reason: "timeout" });
    expect((failure as Error).message).toMatch(
      /the timeout ran out while this process stalled with its try out$/,
    );
  });
});
