// Errors that told something else than what happened (review helper-21), each now told as it is.
import { Redis as IoRedis } from "ioredis";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import {
  Lock,
  LockAcquisitionError,
  type LockLostError,
  LockRedisError,
  quorum,
  type RedisClient,
} from "../../src/index";
import { type RedisServerHandle, startRedisServer } from "../../stack/redis-server";
import { pause, within } from "../faults/support/time";
import { useRedisServer } from "../support/own-server";
import { uniqueId } from "../support/redis";

const url = inject("redisUrl");
const opened: IoRedis[] = [];
const io = (target: string | { port: number; host: string } = url) => {
  const client = typeof target === "string" ? new IoRedis(target) : new IoRedis(target.port, target.host);
  client.on("error", () => {});
  opened.push(client);
  return client;
};
afterAll(() => {
  for (const client of opened) client.disconnect();
});

/** A generic eval client over the test Redis that refuses connections while `down`. */
function switchable() {
  const redis = io();
  const state = { down: false, reply: undefined as unknown };
  const client: RedisClient = {
    async eval(script: string, keys: string[], args: (string | number)[]) {
      if (state.down) {
        await pause(20);
        throw Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:6379"), { code: "ECONNREFUSED" });
      }
      const reply = await redis.eval(script, keys.length, ...keys, ...args.map(String));
      return state.reply ?? reply;
    },
  };
  return { client, state };
}

describe("errors that tell what happened", () => {
  it("two release() calls during an outage both throw: neither says the token does not hold", async () => {
    const { client, state } = switchable();
    const lock = new Lock({ id: uniqueId("concurrent-release"), redis: client, lease: 5_000 });
    expect(await lock.acquire()).toBe(true);
    state.down = true;
    const [first, second] = await Promise.allSettled([lock.release(), lock.release()]);
    state.down = false;
    // The second used to answer false at once, though Redis never answered.
    expect(first.status === "rejected" && first.reason instanceof LockRedisError).toBe(true);
    expect(second.status === "rejected" && second.reason instanceof LockRedisError).toBe(true);
    expect(await lock.release()).toBe(true); // the token held all along
  });

  // Review helper-78 (2026-12-05): a release that failed keeps a shared instance's turn until the key
  // surely expired, and the callers waiting for that turn, or starting after, were told "held" (false from
  // `acquire()`), not the outage (3/3).
  it("a failed release keeps the instance's turn: its next callers are told the outage, not contention", async () => {
    const { client, state } = switchable();
    const lock = new Lock({ id: uniqueId("truthful-turn"), redis: client, lease: 10_000 });
    expect(await lock.acquire()).toBe(true);
    state.down = true;
    const waiting = lock.acquireOrThrow({ timeout: 600 }).catch((error: unknown) => error);
    await expect(lock.release()).rejects.toBeInstanceOf(LockRedisError);
    const after = await lock.acquireOrThrow({ timeout: 600 }).catch((error: unknown) => error);
    for (const failure of [await waiting, after]) {
      expect(failure).toBeInstanceOf(LockAcquisitionError);
      expect(failure).toMatchObject({ reason: "redis-error", cause: expect.any(LockRedisError) });
    }
    await expect(lock.acquire({ timeout: 600 })).rejects.toBeInstanceOf(LockRedisError);
    state.down = false;
    expect(await lock.release()).toBe(true); // the retry, once Redis is back
    expect(await lock.acquire()).toBe(true);
    expect(await lock.release()).toBe(true);
  });

  it("a reply the lock cannot read is no unreachable Redis", async () => {
    const { client, state } = switchable();
    state.reply = "OK"; // the script ran; the client hands back a shape the lock cannot read
    const lock = new Lock({ id: uniqueId("reply-shape"), redis: client, lease: 2_000 });
    const error = await lock.acquire().catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(LockRedisError);
    // It read "Redis could not be reached: Expected a script reply ...".
    expect((error as LockRedisError).reason).toMatch(/^Redis answered in a form the lock cannot read/);
  });

  // Review helper-134 (stop 50, 6/6): replies of integers or nil that no script returns read as contention.
  it.each([
    ["an empty list", []],
    ["a lone 0", 0],
    ["42", 42],
    ["[7]", [7]],
    ["[[1]]", [[1]]],
    ["[null]", [null]],
  ])("a reply of %s, which no script returns, is unreadable too, not a holder", async (_name, reply) => {
    const { client, state } = switchable();
    state.reply = reply;
    const lock = new Lock({ id: uniqueId("reply-integers"), redis: client, lease: 2_000 });
    const error = await lock.acquire({ retry: { attempts: 1 } }).catch((caught: unknown) => caught);
    expect((error as LockRedisError).reason).toMatch(/^Redis answered in a form the lock cannot read/);
    await lock.pending;
  });

  it("a long client message cut short keeps no piece of the token", async () => {
    // A client whose error quotes the request's arguments after a long text (as proxies and wrappers do):
    // the message was cut to 200 characters before the token was taken out, leaving its first part.
    const client: RedisClient = {
      async eval(_script: string, _keys: string[], args: (string | number)[]) {
        throw new Error(
          `ERR proxy rejected it (${"upstream detail ".repeat(9)}) args=${JSON.stringify(args)}`,
        );
      },
    };
    const uuid = `tok-${crypto.randomUUID()}`;
    const lock = new Lock({ id: uniqueId("redact-cut"), redis: client, retry: { attempts: 1 } });
    const error = await lock.acquire({ uuid }).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(LockRedisError);
    const everything = (each: unknown, depth = 0): string => {
      if (!(each instanceof Error) || depth > 5) return String(each);
      const properties = Object.entries(each).map(([key, value]) => `${key}=${String(value)}`);
      return [each.message, each.stack ?? "", ...properties, everything(each.cause, depth + 1)].join("\n");
    };
    expect(everything(error)).not.toContain(uuid.slice(0, 12));
  });

  it('a renewal answered WRONGTYPE (the key overwritten with a hash) reports "taken" at once', async () => {
    const id = uniqueId("overwritten");
    const other = io();
    const lost = new Promise<LockLostError>((resolve) => {
      const lock = new Lock({
        id,
        redis: io(),
        lease: 10_000,
        autoExtend: { interval: 100 },
        onLost: resolve,
      });
      void lock.acquire().then(async (acquired) => {
        expect(acquired).toBe(true);
        await other.multi().del(id).hset(id, "someone", "else").exec();
      });
    });
    // It used to be "expired", once the lease ran out unrenewed (10 s here). No clock reading: every renewal
    // meets the hash, so "taken" is the first one's answer, and a WRONGTYPE taken for a passing failure is
    // retried until the deadline, which says "expired". Bounded past that deadline, lest no loss hang the test.
    expect((await within(lost, 20_000, "the loss")).reason).toBe("taken");
    await other.del(id);
  });

  it("a quorum whose members all granted, read after the lease ran out, is no refusal", async () => {
    const members = [1, 2, 3].map((db) => io(`${url}/${db}`));
    await Promise.all(members.map((member) => member.ping()));
    const lock = new Lock({
      id: uniqueId("quorum-pause"),
      redis: quorum(members),
      lease: 900, // each member is waited for a third of it, the round sent again after the block too
      retry: { attempts: 1 },
    });
    const acquiring = lock.acquire().catch((error: unknown) => error);
    // Unrelated work blocks the process past the lease while the round is in flight: the round used to throw
    // "0 of 3 instances failed" with `refused: true`, and the acquisition gave up as on a refusal.
    setTimeout(() => {
      const end = performance.now() + 1_200;
      while (performance.now() < end) {}
    }, 1);
    const outcome = await acquiring;
    expect(outcome).not.toBeInstanceOf(LockRedisError);
  });
});

describe("a write on a replica (a failover the client has not followed yet)", () => {
  let primary: RedisServerHandle;
  let replica: RedisServerHandle;
  beforeAll(async () => {
    primary = await startRedisServer();
    replica = await startRedisServer({ extraArgs: ["--replicaof", "127.0.0.1", String(primary.port)] });
  }, 30_000);
  afterAll(async () => {
    await replica?.stop();
    await primary?.stop();
  });

  it("is an error of the moment, not a refusal no retry heals", async () => {
    // Redis 7 quotes the script ("script: ..., on @user_script:1") in every error raised inside one, which
    // read as a refusal: READONLY (and OOM, ...) ended the acquisition after one try.
    const lock = new Lock({ id: uniqueId("readonly"), redis: io({ port: replica.port, host: "127.0.0.1" }) });
    const error = await lock.acquireOrThrow().catch((caught: unknown) => caught);
    const cause = (error as { cause?: unknown }).cause;
    expect(cause).toBeInstanceOf(LockRedisError);
    expect((cause as LockRedisError).refused).toBe(false);
    expect((cause as LockRedisError).reason).toMatch(/^Redis answered with an error: READONLY/);
    expect((error as { attempts?: number }).attempts).toBe(3);
  });
});

// Review helper-59 (2026-12-04): NOREPLICAS (and MISCONF) raised inside a script read as a refusal: one try.
describe("a write that too few replicas acknowledge (min-replicas-to-write with none)", () => {
  const own = useRedisServer({ extraArgs: ["--min-replicas-to-write", "1"] });

  it("is an error of the moment, retried, and said to be Redis's answer", async () => {
    const lock = new Lock({
      id: uniqueId("noreplicas"),
      redis: io({ port: own.server().port, host: "127.0.0.1" }),
    });
    const error = await lock.acquireOrThrow().catch((caught: unknown) => caught);
    const cause = (error as { cause?: unknown }).cause as LockRedisError;
    expect(cause).toBeInstanceOf(LockRedisError);
    expect(cause.refused).toBe(false);
    expect(cause.reason).toMatch(/^Redis answered with an error: NOREPLICAS/);
    expect((error as { attempts?: number }).attempts).toBe(3);
  });
});

describe("a client's own timeout (ioredis commandTimeout) while Redis is frozen", () => {
  const { server, connect } = useRedisServer();

  it("says Redis did not answer, not that it could not be reached (review helper-25)", async () => {
    // As docs/guarantees.md's fast-failure settings, with a short commandTimeout.
    const redis = connect({ enableOfflineQueue: false, commandTimeout: 300 });
    redis.on("error", () => {});
    const id = uniqueId("client-timeout");
    const lock = new Lock({ id, redis });
    expect(await lock.acquire()).toBe(true);
    server().freeze();
    const error = await lock.release().catch((caught: unknown) => caught);
    server().thaw();
    expect(error).toBeInstanceOf(LockRedisError);
    expect((error as LockRedisError).reason).toBe(
      "Redis did not answer (the client's timeout: Command timed out)",
    );
    expect((error as LockRedisError).refused).toBe(false);
  });
});
