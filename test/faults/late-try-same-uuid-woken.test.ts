// B4's fix (review helper-216): a waiter woken by a release, whose try finds its uuid held by a later try
// (a process whose clock runs ahead took it meanwhile), goes again at once and holds with it.
import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import { enableWakeUps, Lock } from "../../src/index";
import { companionKey } from "../../src/keys";
import { useRedisServer } from "../support/own-server";
import { uniqueId } from "../support/redis";
import { takerAhead } from "../support/taker-ahead";
import { waitUntil } from "./support/time";

const { connect } = useRedisServer();

describe("a woken waiter whose uuid a later try took meanwhile", () => {
  it("holds with it, sent again at once, not at its next poll", async () => {
    const id = uniqueId("woken-after");
    const uuid = crypto.randomUUID();
    const direct = connect();
    const redis = connect();
    enableWakeUps(redis);
    await direct.set(id, "another", "PX", 20_000);
    const lock = new Lock({ id, redis, lease: 20_000 });
    const channel = `lock-events:${createHash("sha1").update(id).digest("hex")}`;
    const subscribed = async () => ((await direct.pubsub("CHANNELS", channel)) as string[]).length > 0;
    // Covered once subscribed: safety polls 20 s apart, so a wake-up ends the wait before the test times out.
    const waiting = lock.acquire({ uuid, retry: { attempts: 1_000, delay: 100, maxDelay: 20_000 } });
    await waitUntil(subscribed, "the waiter listens", {
      timeoutMs: 15_000,
    });
    const ahead = takerAhead();
    await direct.set(id, uuid, "PX", 20_000);
    await direct.set(companionKey(id, ":grant"), ahead, "PX", 20_000);
    await direct.publish(channel, "released");
    expect(await waiting).toBe(true);
    expect(await direct.get(companionKey(id, ":grant"))).toMatch(new RegExp(`^${ahead} \\S+`));
    await lock.release();
  }, 25_000);
});
