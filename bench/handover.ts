// The waiter's view: one holder, one waiter, default retry policy (100 ms polling), and the issue's
// long wait polling every second (which wake-ups must hand over within 2 round trips + 2 ms). How long after
// the holder calls release() does the waiter hold the lock? With polling, up to one poll interval;
// with wake-ups (`enableWakeUps` on the waiter's client), about a round trip. A waiter with a 5 s
// timeout subscribes after its first try found the lock held (polling until the timeout would cost
// more); the holder releases 350 ms or more later, so the wake-up row measures a waiter that is
// subscribed. Section 8 of bench/run.ts, which writes its table to handover.md.
import { Redis as IoRedis } from "ioredis";
import { enableWakeUps, Lock } from "../dist/index.js";
import { upstashClient } from "./clients";
import type { BenchEnvironment } from "./environment";
import { round, type Summary, summarize } from "./stats";

/** The holder releases this long (plus up to 100 ms) after the waiter starts waiting. */
const RELEASE_AFTER_MS = 350;
type Client = ReturnType<typeof upstashClient> | IoRedis;

/**
 * The waits measured: default polling without and with wake-ups, and a wait polling every second;
 * "rtt" is no wait but the baseline: a PING on the holder's client after the same idle pause as a
 * release (on a shared VM a request after a pause of this length takes a few times a back-to-back one).
 */
export type HandoverWait = "poll" | "wake" | "wake-1s" | "rtt";

/** The long polling wait: a try every second, until the timeout. */
const EVERY_SECOND = { attempts: Number.POSITIVE_INFINITY, delay: 1_000 } as const;

/** One row of the table: a transport and a variant, the gaps in ms. */
export interface HandoverRow extends Summary {
  readonly transport: string;
  readonly wait: HandoverWait;
  readonly variant: string;
}

/** The pause before a release, drawn the same way for a handover and for its round-trip baseline. */
const pause = () => new Promise((resolve) => setTimeout(resolve, RELEASE_AFTER_MS + Math.random() * 100));

/** The baseline: one PING on `client` after the same pause as a release, in ms. */
async function idleRoundTripMs(client: Client): Promise<number> {
  await pause();
  const sentAt = performance.now();
  await client.ping();
  return performance.now() - sentAt;
}

/** One handover: the waiter is already waiting when the holder releases. */
async function handoverMs(
  id: string,
  holderClient: Client,
  waiterClient: Client,
  wait: HandoverWait,
): Promise<number> {
  const holder = new Lock({ id, redis: holderClient, lease: 10_000 });
  await holder.acquireOrThrow();
  const waiter = new Lock({
    id,
    redis: waiterClient,
    ...(wait === "wake-1s" ? { retry: EVERY_SECOND } : {}),
  });
  const acquired = waiter.acquireOrThrow({ timeout: 5_000 }).then(() => performance.now());
  // Release at a random phase of the waiter's polling, after its subscription (if any) is up.
  await pause();
  const releasedAt = performance.now();
  await holder.release();
  const gap = (await acquired) - releasedAt;
  await waiter.release();
  return gap;
}

async function measure(
  label: string,
  rounds: number,
  makeClient: () => Client,
  close: (client: Client) => Promise<unknown>,
): Promise<HandoverRow[]> {
  const rows: HandoverRow[] = [];
  const variants: Record<HandoverWait, string> = {
    wake: "ours, wake-ups (`enableWakeUps` on the waiter's client)",
    poll: "ours, defaults (polling 100 ms)",
    "wake-1s": "ours, wake-ups, polling every 1 s (`retry: { attempts: Infinity, delay: 1000 }`)",
    rtt: "baseline: one PING after the same pause (a round trip as the release meets it)",
  };
  for (const wait of ["wake", "poll", "wake-1s", "rtt"] as const) {
    const [holderClient, waiterClient] = [makeClient(), makeClient()];
    if (wait !== "poll" && wait !== "rtt") enableWakeUps(waiterClient);
    const gaps: number[] = [];
    for (let index = 0; index < rounds; index++) {
      const id = `bench:handover:${label}:${wait}:${index}:${Date.now()}`;
      gaps.push(
        wait === "rtt"
          ? await idleRoundTripMs(holderClient)
          : await handoverMs(id, holderClient, waiterClient, wait),
      );
    }
    await Promise.all([close(holderClient), close(waiterClient)]);
    rows.push({ transport: label, wait, variant: variants[wait], ...summarize(gaps) });
  }
  return rows;
}

/** Section 8: both rows over HTTP, and over TCP when the run has a TCP Redis. */
export async function measureHandover(env: BenchEnvironment, rounds: number): Promise<HandoverRow[]> {
  const { http, redisUrl } = env.endpoints;
  const rows: HandoverRow[] = [];
  if (http)
    rows.push(
      ...(await measure(
        "HTTP (@upstash/redis)",
        rounds,
        () => upstashClient(http),
        async () => {},
      )),
    );
  if (redisUrl) {
    rows.push(
      ...(await measure(
        "TCP (ioredis)",
        rounds,
        () => new IoRedis(redisUrl, { protocol: 2 }),
        (client) => (client as IoRedis).quit(),
      )),
    );
  }
  return rows;
}

/** handover.md: the table and what it measures. */
export function handoverMarkdown(rows: readonly HandoverRow[], caption: string): string {
  const rounds = rows[0]?.n ?? 0;
  return [
    "# Handover to a waiting process",
    "",
    `${caption}. One holder and one waiter on separate clients; the waiter waits with the default retry policy (100 ms polling), or polling every second, and a 5 s timeout; the holder releases ${RELEASE_AFTER_MS}-${RELEASE_AFTER_MS + 100} ms later, once a waiter with wake-ups has subscribed (it does after its first try finds the lock held). Time from release() called to the waiter's acquire resolving, ${rounds} rounds per row, ms.`,
    "",
    "| Transport | Variant | p50 | p99 | mean | max |",
    "| --- | --- | --: | --: | --: | --: |",
    ...rows.map(
      (row) =>
        `| ${row.transport} | ${row.variant} | ${round(row.p50, 2)} | ${round(row.p99, 2)} | ${round(row.mean, 2)} | ${round(row.max, 2)} |`,
    ),
    "",
  ].join("\n");
}
