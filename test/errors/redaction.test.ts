// No lock token in any error the library throws, nor anywhere along its cause chain (messages,
// stacks, properties), for every client and every operation, with a seeded and a drawn token; and
// no script text either: messages name the operation.
import { Redis as UpstashRedis } from "@upstash/redis";
import { Redis as IoRedis } from "ioredis";
import { createClient } from "redis";
import { afterAll, describe, expect, inject, it, vi } from "vitest";
import { Lock, type RedisClient, Semaphore } from "../../src/index";
import { companionKey } from "../../src/keys";
import { newRedis, uniqueId } from "../support/redis";

const closers: (() => unknown)[] = [];
afterAll(async () => {
  for (const close of closers) await close();
});

const clients: [string, () => Promise<RedisClient>][] = [
  ["@upstash/redis (auto-pipelining)", async () => newRedis()],
  ["@upstash/redis (no pipelining)", async () => newRedis({ enableAutoPipelining: false })],
  [
    "ioredis",
    async () => {
      const client = new IoRedis(inject("redisUrl"));
      closers.push(() => client.disconnect());
      return client;
    },
  ],
  [
    "node-redis",
    async () => {
      const client = await createClient({ url: inject("redisUrl") }).connect();
      closers.push(() => client.destroy());
      return client;
    },
  ],
];

/** Everything an error carries: messages, stacks and own properties, along the cause chain. */
function everything(error: unknown): string {
  let text = "";
  for (
    let current = error, depth = 0;
    current instanceof Error && depth < 10;
    current = current.cause, depth++
  ) {
    text += `${current.message}\n${current.stack ?? ""}\n${JSON.stringify({ ...current }, (_k, v) => (typeof v === "bigint" ? String(v) : v))}\n`;
    if (current instanceof AggregateError) text += current.errors.map(everything).join("\n");
  }
  return text;
}

// The lock key and the permit keys hold hashes, so every script fails with WRONGTYPE, an error
// reply that clients quote.
async function wrongType(): Promise<string> {
  const id = uniqueId("redact");
  for (const key of [id, companionKey(id, ":permit:1"), companionKey(id, ":permit:2")]) {
    await newRedis().hset(key, { not: "a lock" });
  }
  return id;
}

describe.each(clients)("%s", (_name, connect) => {
  it.each(["seeded", "drawn"])(
    "a %s token appears in no error of acquire, release, extend or getStatus",
    async (how) => {
      if (inject("redisUrl") === "") return; // Against a real Upstash database there is no Redis URL for TCP clients.
      const redis = await connect();
      const id = await wrongType();
      const token = `tok-${crypto.randomUUID()}`;
      const draw = vi
        .spyOn(crypto, "randomUUID")
        .mockReturnValue(token as `${string}-${string}-${string}-${string}-${string}`);
      try {
        const seeded = how === "seeded";
        const lock = new Lock({ id, redis, ...(seeded ? { uuid: token } : {}) });
        const errors: unknown[] = [];
        errors.push(
          await lock.acquire(seeded ? { uuid: token } : undefined).catch((error: unknown) => error),
        );
        errors.push(
          await lock.acquireOrThrow(seeded ? { uuid: token } : undefined).catch((error: unknown) => error),
        );
        errors.push(await new Lock({ id, redis, uuid: token }).release().catch((error: unknown) => error));
        errors.push(await new Lock({ id, redis, uuid: token }).extend(100).catch((error: unknown) => error));
        errors.push(await new Lock({ id, redis, uuid: token }).getStatus().catch((error: unknown) => error));
        const semaphore = new Semaphore({ id, redis, limit: 2 });
        errors.push(
          await semaphore.acquire(seeded ? { uuid: token } : undefined).catch((error: unknown) => error),
        );
        errors.push(
          await semaphore
            .permit(token)
            .release()
            .catch((error: unknown) => error),
        );
        for (const error of errors) {
          expect(error).toBeInstanceOf(Error);
          const text = everything(error);
          expect(text).not.toContain(token);
          expect(text).not.toMatch(/redis\.call|allow-key-locking|KEYS\[/);
          expect((error as Error).message.length).toBeLessThan(300);
          expect(text).toMatch(/WRONGTYPE/);
        }
      } finally {
        draw.mockRestore();
      }
    },
  );
});

describe("refusals", () => {
  it("a wrong REST token is said as Redis said it, and sent once: no retry can heal it", async () => {
    let requests = 0;
    const redis = new UpstashRedis({
      url: inject("upstashUrl"),
      token: "wrong-token",
      enableTelemetry: false,
      retry: false,
    });
    const real = globalThis.fetch;
    const counting = vi.spyOn(globalThis, "fetch").mockImplementation((...args) => {
      requests += 1;
      return real(...args);
    });
    try {
      const error = (await new Lock({ id: uniqueId("wrong-token"), redis })
        .acquireOrThrow()
        .catch((e: unknown) => e)) as Error;
      expect(error.message).toMatch(/Redis refused the request: Unauthorized/);
      expect(error.message).not.toMatch(/could not be reached/);
      expect(requests).toBe(1);
    } finally {
      counting.mockRestore();
    }
  });
});
