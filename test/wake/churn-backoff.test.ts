// Review helper-188: a stream that ends each subscription just after it has been active three retry delays
// (which counted as a subscription that paid for itself, so the wait subscribed again at once), under
// exponential backoff, whose polls grow to `maxDelay` apart. Each subscription cost its SUBSCRIBE, its
// covering poll (sent once it is active) and the retry after its break: 57 billed commands where polling
// costs 11 (38 before the covering poll went at activation). The wait must cost about what polling would.
import { afterAll, beforeAll, expect, it } from "vitest";
import { enableWakeUps, FairLock } from "../../src/index";
import { eventChannel } from "../../src/keys";
import { feedFor } from "../../src/wake/feeds";
import { type LocalStack, startLocalStack } from "../../stack/local-stack";
import { pause, waitUntil } from "../faults/support/time";
import { uniqueId } from "../support/redis";

// The polling baseline runs on a stack of its own, at the same time as the churned wait: on a loaded machine
// both slow alike. It polls (`wakeOnRelease: false`): a fair waiter on @upstash/redis otherwise subscribes for
// its grant, and its cost then varies with timer lateness and the subscription's activation (review
// helper-221); polling sends 7 tries and a leave.
let stack: LocalStack;
let baselineStack: LocalStack;
beforeAll(async () => {
  [stack, baselineStack] = await Promise.all([startLocalStack(), startLocalStack()]);
});
afterAll(async () => {
  await Promise.all([stack?.stop(), baselineStack?.stop()]);
});

const RETRY = {
  attempts: Number.POSITIVE_INFINITY,
  delay: 100,
  maxDelay: 2_000,
  backoff: "exponential",
} as const;
const TIMEOUT_MS = 6_000;

it("FairLock, exponential backoff: a stream that breaks each subscription 3 delays after it is active", async () => {
  const { Redis } = await import("@upstash/redis");
  const client = (on = stack) =>
    new Redis({ url: on.url, token: on.token, retry: false, enableTelemetry: false });
  const billed = (on = stack) => on.proxy.stats.commands + on.proxy.stats.subscriptions;

  const id = uniqueId("churn-backoff");
  const channel = (await eventChannel(id)) as string;
  const holder = new FairLock({ id, redis: client(), lease: 30_000 });
  expect(await holder.acquire()).toBe(true);
  const baselineHolder = new FairLock({ id, redis: client(baselineStack), lease: 30_000 });
  expect(await baselineHolder.acquire()).toBe(true);

  // Polling alone, as the baseline, on its own stack, beside the churned wait.
  const baselineBefore = billed(baselineStack);
  const poller = new FairLock({ id, redis: client(baselineStack), retry: RETRY, wakeOnRelease: false });
  const polled = poller.acquire({ timeout: TIMEOUT_MS });

  const redis = client();
  enableWakeUps(redis);
  const before = billed();
  let running = true;
  let breaks = 0;
  // Each subscription, once active, lives a little over 3 delays, then its stream ends.
  const breaker = (async () => {
    while (running) {
      try {
        await waitUntil(() => !running || feedFor(redis)?.active(channel) === true, "active", {
          timeoutMs: 3_000,
          intervalMs: 5,
        });
      } catch {
        continue;
      }
      if (!running) return;
      await pause(3 * RETRY.delay + 40);
      if (!running) return;
      breaks += stack.proxy.endSubscriptions() > 0 ? 1 : 0;
    }
  })();
  const waiter = new FairLock({ id, redis, retry: RETRY });
  try {
    expect(await waiter.acquire({ timeout: TIMEOUT_MS })).toBe(false);
  } finally {
    running = false;
    await breaker;
  }
  await waiter.pending;
  const churned = billed() - before;
  expect(await polled).toBe(false);
  await poller.pending; // its leave of the line, in the background
  const polling = billed(baselineStack) - baselineBefore;
  expect(breaks).toBeGreaterThanOrEqual(2); // the first re-asked at once, then at least one more
  // A subscription that pays, and one more after the first break, add a few: the churned wait cost 13 to 14
  // against polling's 8 (7 tries at 0, 0.1, 0.3, 0.7, 1.5, 3.1 and 5.1 s, and the leave), quiet or loaded; a
  // subscription active later than the next planned poll adds that poll (room for two such). The defect cost
  // 38 to 57.
  expect(churned, `churned ${churned}, polling ${polling}, breaks ${breaks}`).toBeLessThanOrEqual(
    polling + 8,
  );
  expect(await holder.release()).toBe(true);
  expect(await baselineHolder.release()).toBe(true);
}, 30_000);
