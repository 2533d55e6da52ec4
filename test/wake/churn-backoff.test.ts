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

let stack: LocalStack;
beforeAll(async () => {
  stack = await startLocalStack();
});
afterAll(async () => {
  await stack.stop();
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
  const client = () =>
    new Redis({ url: stack.url, token: stack.token, retry: false, enableTelemetry: false });
  const { stats } = stack.proxy;
  const billed = () => stats.commands + stats.subscriptions;

  const id = uniqueId("churn-backoff");
  const channel = (await eventChannel(id)) as string;
  const holder = new FairLock({ id, redis: client(), lease: 30_000 });
  expect(await holder.acquire()).toBe(true);

  // Polling alone, as the baseline.
  let before = billed();
  const poller = new FairLock({ id, redis: client(), retry: RETRY });
  expect(await poller.acquire({ timeout: TIMEOUT_MS })).toBe(false);
  await poller.pending; // its leave of the line, in the background
  const polling = billed() - before;

  const redis = client();
  enableWakeUps(redis);
  before = billed();
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
  expect(breaks).toBeGreaterThanOrEqual(2); // the first re-asked at once, then at least one more
  // A subscription that pays, and one more after the first break, add a few.
  expect(churned, `churned ${churned}, polling ${polling}, breaks ${breaks}`).toBeLessThanOrEqual(
    polling + 4,
  );
  expect(await holder.release()).toBe(true);
}, 30_000);
