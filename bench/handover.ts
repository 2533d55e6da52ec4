// The waiter's view: one holder, one waiter, default retry policy (100 ms polling). How long after
// the holder calls release() does the waiter hold the lock? With polling, up to one poll interval;
// with wake-ups, about a round trip. A waiter subscribes only once its third try found the same
// holder (about 200 ms into the wait), and polls once more after that (about 300 ms): the holder
// releases later than that, so the wake-up row measures a waiter that is subscribed. Run after bench/run.ts by `npm run bench`, or on its own with
// `npx tsx bench/handover.ts`; writes bench/results/handover.{json,md}.
import { mkdir, writeFile } from "node:fs/promises";
import { Redis as UpstashRedis } from "@upstash/redis";
import { Redis as IoRedis } from "ioredis";
import { Lock } from "../dist/index.js";
import { startLocalStack } from "../stack/local-stack";
import { round, summarize } from "./stats";

const ROUNDS = process.argv.includes("--quick") ? 8 : 40;
/** The holder releases this long (plus up to 100 ms) after the waiter starts waiting. */
const RELEASE_AFTER_MS = 350;
type Client = UpstashRedis | IoRedis;

/** One handover: the waiter is already waiting when the holder releases. */
async function handoverMs(
  id: string,
  holderClient: Client,
  waiterClient: Client,
  wake: boolean,
): Promise<number> {
  const holder = new Lock({ id, redis: holderClient, lease: 10_000 });
  await holder.acquireOrThrow();
  const waiter = new Lock({ id, redis: waiterClient, wakeOnRelease: wake });
  const acquired = waiter.acquireOrThrow({ timeout: 5_000 }).then(() => performance.now());
  // Release at a random phase of the waiter's polling, after its subscription (if any) is up.
  await new Promise((resolve) => setTimeout(resolve, RELEASE_AFTER_MS + Math.random() * 100));
  const releasedAt = performance.now();
  await holder.release();
  const gap = (await acquired) - releasedAt;
  await waiter.release();
  return gap;
}

async function measure(label: string, makeClient: () => Client, close: (client: Client) => Promise<unknown>) {
  const [holderClient, waiterClient] = [makeClient(), makeClient()];
  const rows = [];
  for (const wake of [true, false]) {
    const gaps: number[] = [];
    for (let index = 0; index < ROUNDS; index++) {
      gaps.push(
        await handoverMs(
          `bench:handover:${label}:${wake}:${index}:${Date.now()}`,
          holderClient,
          waiterClient,
          wake,
        ),
      );
    }
    const summary = summarize(gaps);
    rows.push({
      transport: label,
      variant: wake ? "ours, defaults (wake-ups on)" : "ours, polling 100 ms (wakeOnRelease: false)",
      ...summary,
    });
  }
  await Promise.all([close(holderClient), close(waiterClient)]);
  return rows;
}

// Key-locked scripts without the proxy's Lua key check, as in bench/environment.ts.
const stack = await startLocalStack({ scriptFlags: "accept" });
try {
  const http = await measure(
    "HTTP (@upstash/redis)",
    () => new UpstashRedis({ url: stack.url, token: stack.token, enableTelemetry: false }),
    async () => {},
  );
  const tcp = await measure(
    "TCP (ioredis)",
    () => new IoRedis(stack.redisUrl, { protocol: 2 }),
    (client) => (client as IoRedis).quit(),
  );
  const rows = [...http, ...tcp];
  const lines = [
    "# Handover to a waiting process",
    "",
    `One holder and one waiter on separate clients; the waiter waits with the default retry policy (100 ms polling) and a 5 s timeout; the holder releases ${RELEASE_AFTER_MS}-${RELEASE_AFTER_MS + 100} ms later, once a waiter with wake-ups on has subscribed (it does after its third try finds the same holder). Time from release() called to the waiter's acquire resolving, ${ROUNDS} rounds per row, ms.`,
    "",
    "| Transport | Variant | p50 | p99 | mean | max |",
    "| --- | --- | --: | --: | --: | --: |",
    ...rows.map(
      (row) =>
        `| ${row.transport} | ${row.variant} | ${round(row.p50, 2)} | ${round(row.p99, 2)} | ${round(row.mean, 2)} | ${round(row.max, 2)} |`,
    ),
    "",
  ];
  await mkdir(new URL("./results/", import.meta.url), { recursive: true });
  await writeFile(new URL("./results/handover.json", import.meta.url), `${JSON.stringify(rows, null, 2)}\n`);
  await writeFile(new URL("./results/handover.md", import.meta.url), lines.join("\n"));
  process.stdout.write(`${lines.join("\n")}\n`);
} finally {
  await stack.stop();
}
