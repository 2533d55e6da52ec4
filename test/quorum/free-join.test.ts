// Review helper-80 (2026-12-05): a quorum's subscription counted as active (free to join) once a majority of
// members' were, yet joining it subscribes on every member: one whose subscription had ended got a new one,
// a billed SUBSCRIBE the wait's attempts did not count (3/3: 4 commands on that member for `attempts: 3`).
import { Redis } from "@upstash/redis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { enableWakeUps, Lock, quorum } from "../../src/index";
import { type LocalStack, startLocalStack } from "../../stack/local-stack";
import { pause, waitUntil } from "../faults/support/time";
import { uniqueId } from "../support/redis";

let stacks: LocalStack[] = [];
beforeAll(async () => {
  stacks = await Promise.all([0, 1, 2].map(() => startLocalStack()));
}, 30_000);
afterAll(async () => {
  await Promise.all(stacks.map((stack) => stack.stop()));
});
const members = () =>
  quorum(stacks.map(({ url, token }) => new Redis({ url, token, retry: false, enableTelemetry: false })));
const billed = () => stacks.map(({ proxy }) => proxy.stats.commands + proxy.stats.subscriptions);

describe("a quorum wait, while only a majority of members' subscriptions linger", () => {
  it("bills no member more commands than its attempts", async () => {
    const id = uniqueId("quorum-free-join");
    const holder = new Lock({ id, redis: members(), lease: 60_000 });
    expect(await holder.acquire()).toBe(true);
    const redis = members();
    enableWakeUps(redis);
    const stopped = new AbortController();
    const long = { retry: { attempts: 1_000, delay: 100, maxDelay: 8_000 }, signal: stopped.signal };
    const first = new Lock({ id, redis }).acquire(long).catch(() => false);
    await waitUntil(() => stacks.every(({ proxy }) => proxy.openSubscriptions() === 1), "subscribed");
    await pause(300); // confirmed on every member
    stopped.abort();
    await first;
    stacks[1]?.proxy.endSubscriptions(); // member 1's ends; 0's and 2's linger (250 ms)
    await pause(20);
    const before = billed();
    expect(await new Lock({ id, redis, retry: { attempts: 3, delay: 100 } }).acquire()).toBe(false);
    const used = billed().map((count, member) => count - (before[member] as number));
    expect(Math.max(...used)).toBeLessThanOrEqual(3);
    expect(await holder.release()).toBe(true);
  }, 30_000);
});
