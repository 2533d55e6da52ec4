// A fair release hands the lock to the next waiter by a message, and the waiter holds on its word,
// without a request. A message can be read late (a busy process, a slow stream): by then the
// waiter may have taken that lock by a try of its own, released it, and queued again with the same
// token (a uuid passed to acquire). The late message must not make it a second holder.
import type { Redis as IoRedis } from "ioredis";
import { afterAll, describe, expect, it } from "vitest";
import { enableWakeUps, FairLock } from "../../src/index";
import { companionKey } from "../../src/keys";
import { useRedisServer } from "../support/own-server";
import { uniqueId } from "../support/redis";
import { waitUntil } from "./support/time";

const { connect } = useRedisServer();
/** Subscriber connections duplicated by {@link readingMessagesLate}: disconnected before the server stops. */
const subscribers: IoRedis[] = [];
afterAll(() => {
  for (const subscriber of subscribers) subscriber.disconnect();
});

/** A client whose waiters hear the lock's announcements (opt-in on ioredis since the rewrite). */
function waking(client: IoRedis): IoRedis {
  enableWakeUps(client);
  return client;
}

type MessageListener = (channel: string, message: string) => void;

/**
 * A real ioredis client whose subscriber connections (the ones the lock opens with `duplicate()`
 * to hear its events) hand every message over `lateMs` late, recording each one in `delivered`
 * as it is handed over.
 */
function readingMessagesLate(client: IoRedis, lateMs: number, delivered: string[]): IoRedis {
  const late = (subscriber: IoRedis): IoRedis =>
    new Proxy(subscriber, {
      get(target, property) {
        if (property !== "on") return Reflect.get(target, property, target);
        return (event: string, listener: MessageListener) => {
          if (event !== "message") return target.on(event, listener);
          return target.on(event, (channel: string, message: string) => {
            setTimeout(() => {
              delivered.push(message);
              listener(channel, message);
            }, lateMs);
          });
        };
      },
    });
  return new Proxy(client, {
    get(target, property) {
      if (property === "duplicate") {
        return () => {
          const subscriber = target.duplicate();
          subscribers.push(subscriber);
          return late(subscriber);
        };
      }
      return Reflect.get(target, property, target);
    },
  });
}

describe("a fair lock whose waiter reads a grant late", () => {
  it("does not hold on a grant for an earlier stay in line, taken meanwhile by a try", async () => {
    const id = uniqueId("late-grant");
    const fair = { lease: 5_000, retry: { delay: 20, maxDelay: 20 } } as const;
    const first = new FairLock({ id, redis: waking(connect()), ...fair });
    const delivered: string[] = [];
    const seeded = new FairLock({
      id,
      redis: waking(readingMessagesLate(connect(), 500, delivered)),
      ...fair,
    });
    const next = new FairLock({ id, redis: waking(connect()), ...fair });
    await first.acquireOrThrow();

    // "seeded" waits in line at place 1, "next" behind it.
    // Each in line before the next step (waited for, not assumed after a fixed 100 ms: a loaded machine's
    // later first try would put "next" first).
    const line = connect();
    const queued = (count: number, what: string) =>
      waitUntil(async () => (await line.zcard(companionKey(id, ":queue"))) === count, what);
    const seededWaits = seeded.acquire({ timeout: 2_000, uuid: "seeded" });
    await queued(1, '"seeded" in line');
    const nextWaits = next.acquire({ timeout: 2_000 });
    await queued(2, '"next" in line behind it');

    // The release hands the lock to "seeded", whose message arrives 500 ms late: a try of its own
    // finds the lock its own first.
    await first.release();
    expect(await seededWaits).toBe(true);
    // It releases, which hands the lock to "next", and waits again with the same token, at place 3.
    await seeded.release();
    expect(await nextWaits).toBe(true);
    const again = await seeded.acquire({ timeout: 1_000, uuid: "seeded" });

    // The grant for its first place (the line's first: "next" queued after it) arrived during that wait
    // (it was handed over, late). "next" held the lock all along.
    const places = delivered
      .flatMap((message) => /^granted:[^:]+:(\d+):/.exec(message)?.[1] ?? [])
      .map(Number);
    expect(places.filter((place) => place === Math.min(...places))).toHaveLength(1);
    expect(again).toBe(false);
    expect(await next.getStatus()).toBe("ACQUIRED");
    await next.release();
  });
});
