// A contention worker: one of K processes that loop acquire → work → release on one shared key.
// Long-lived: the orchestrator starts a pool once and sends it one `run` message per point.

import type { RequestCounts } from "../test/support/request-counter";
import { childConfig, report, reportFailure } from "./children";
import { closeClients, connectClients, createClients, type Endpoints } from "./clients";
import { sharedNow, sleep, sleepUntil } from "./clock";
import { countFetches, countIoredisCommands } from "./taps";
import { lockHandle, type Transport, type VariantId } from "./variants";

/** What the orchestrator asks of one worker for one point. */
export interface RunMessage {
  readonly type: "run";
  readonly variant: VariantId;
  readonly transport: Transport;
  readonly key: string;
  /** Shared-clock times (epoch ms) at which to start, and after which to start no new acquire. */
  readonly startAt: number;
  readonly endAt: number;
  readonly workMs: number;
}

/** What one worker did in one point. */
export interface WorkerReport {
  /** Per critical section: acquire called, acquire resolved, release called (shared clock). Flat triples. */
  readonly sections: number[];
  /** acquire() calls that resolved false or threw. */
  readonly failures: number;
  /** release() calls that reported the lock was not ours any more. */
  readonly releaseMisses: number;
  /** What the process's `@upstash/redis` clients sent (counted at `fetch`). */
  readonly http: RequestCounts;
  /** What its ioredis clients sent, by command. */
  readonly tcp: RequestCounts;
  readonly firstError?: string;
}

const endpoints = childConfig<Endpoints>();
const httpCounter = countFetches();
const tcpCounter = countIoredisCommands();
const clients = createClients(endpoints);

try {
  // Connect and warm up before the orchestrator starts the clock.
  await connectClients(clients);
  report({ type: "ready" });
} catch (error) {
  reportFailure(error);
}

process.on("message", (message: RunMessage | { type: "exit" }) => {
  if (message.type === "exit") {
    closeClients(clients);
    process.exit(0);
  }
  runPoint(message).then(
    (result) => report({ type: "done", result }),
    (error: unknown) => reportFailure(error),
  );
});

async function runPoint(run: RunMessage): Promise<WorkerReport> {
  const handle = await lockHandle(run.variant, run.transport, clients, run.key, true);
  const httpBefore = httpCounter.snapshot();
  const tcpBefore = tcpCounter.snapshot();
  const sections: number[] = [];
  let failures = 0;
  let releaseMisses = 0;
  let firstError: string | undefined;
  await sleepUntil(run.startAt);
  while (sharedNow() < run.endAt) {
    let acquired = false;
    const calledAt = sharedNow();
    try {
      acquired = await handle.acquire();
    } catch (error) {
      firstError ??= String(error);
    }
    if (!acquired) {
      failures += 1;
      await sleep(10);
      continue;
    }
    const acquiredAt = sharedNow();
    await sleep(run.workMs);
    const releaseAt = sharedNow();
    const released = await handle.release().catch((error: unknown) => {
      firstError ??= String(error);
      return false;
    });
    if (released === false) releaseMisses += 1;
    sections.push(calledAt, acquiredAt, releaseAt);
  }
  return {
    sections,
    failures,
    releaseMisses,
    http: httpCounter.since(httpBefore),
    tcp: tcpCounter.since(tcpBefore),
    ...(firstError === undefined ? {} : { firstError }),
  };
}
