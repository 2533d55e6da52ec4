import { Redis, type RedisConfigNodejs } from "@upstash/redis";
import { afterAll, beforeAll, beforeEach, inject } from "vitest";
import { type LocalStack, startLocalStack } from "../../../stack/local-stack";
import { type RedisServerHandle, startRedisServer } from "../../../stack/redis-server";
import { type PassThrough, startPassThrough } from "../../support/pass-through";

/** Where an Upstash REST client can reach Redis. */
export interface Endpoint {
  readonly url: string;
  readonly token: string;
}

/** The suite's shared server. Tests that stop or restart Redis must use {@link usePrivateStack} instead. */
export function sharedEndpoint(): Endpoint {
  return { url: inject("upstashUrl"), token: inject("upstashToken") };
}

/**
 * A real @upstash/redis client, telemetry off, `retry: false` unless the test asks otherwise. That client
 * still re-sends a request once when its connection fails (it counts `false` as one retry): a cut
 * connection (`ghostNext`, `dropReplies`) gives two copies of the call, a timeout (`signal`) one.
 */
export function clientFor(endpoint: Endpoint, overrides: Partial<RedisConfigNodejs> = {}): Redis {
  return new Redis({ ...endpoint, retry: false, enableTelemetry: false, ...overrides });
}

/** A redis-server and proxy of this test file's own, so stopping Redis disturbs no other file. */
export interface PrivateStack {
  readonly endpoint: Endpoint;
  /** The redis-server behind the proxy: stop it, restart it. */
  readonly redis: RedisServerHandle;
  readonly stack: LocalStack;
}

/**
 * Starts a private stack before the file's (or describe block's) tests and stops it after them.
 * @param redisArgs extra redis-server arguments, e.g. `["--appendonly", "yes"]` for persistence.
 */
export function usePrivateStack(redisArgs: readonly string[] = []): () => PrivateStack {
  let running: PrivateStack | undefined;
  beforeAll(async () => {
    const redis = await startRedisServer({ extraArgs: redisArgs });
    try {
      const stack = await startLocalStack({ redisUrl: redis.url });
      running = { endpoint: { url: stack.url, token: stack.token }, redis, stack };
    } catch (error) {
      await redis.stop();
      throw error;
    }
  });
  afterAll(async () => {
    await running?.stack.stop();
    await running?.redis.stop();
  });
  return () => {
    if (running === undefined) throw new Error("The private stack is only available inside tests");
    return running;
  };
}

/** A fault-injecting pass-through in front of an endpoint, and a client that goes through it. */
export interface Wire {
  readonly passThrough: PassThrough;
  /** Talks to Redis through the pass-through, so it suffers the faults: give it to the lock under test. */
  readonly faulty: Redis;
  /** Talks to the proxy directly, never faulted: for checking what Redis holds. */
  readonly direct: Redis;
  /** Requests that reached the pass-through so far, faulted or not. */
  requests(): number;
  /** Of those, the release subscriptions a waiting acquire opens (`wakeOnRelease`), one per wait. */
  subscriptions(): number;
  /**
   * Requests that arrived and are not yet answered by Redis: at 0, a fault set now hits every request still
   * to come (one sent but not yet arrived included), and none that may yet run.
   */
  inFlight(): number;
}

/** Starts a pass-through in front of `target()` for the file's tests; faults are cleared before each test. */
export function useWire(target: () => Endpoint): () => Wire {
  let wire: Wire | undefined;
  beforeAll(async () => {
    const endpoint = target();
    const passThrough = await startPassThrough({ target: endpoint.url });
    wire = {
      passThrough,
      faulty: clientFor({ url: passThrough.url, token: endpoint.token }),
      direct: clientFor(endpoint),
      requests: () => passThrough.stats.requests,
      subscriptions: () =>
        Object.entries(passThrough.stats.byPath)
          .filter(([path]) => path.startsWith("/subscribe/"))
          .reduce((total, [, count]) => total + count, 0),
      inFlight: () => passThrough.stats.requests - passThrough.stats.responses,
    };
  });
  beforeEach(() => wire?.passThrough.faults.reset());
  afterAll(async () => {
    await wire?.passThrough.close();
  });
  return () => {
    if (wire === undefined) throw new Error("The pass-through is only available inside tests");
    return wire;
  };
}
