import { Lock as Lock021 } from "@upstash/lock-0.2.1";
import { Lock } from "../dist/index.js";
import type { ProxyStats } from "../stack/proxy/stats";
import { billedAtProxy, byRoute, type RequestCounts } from "../test/support/request-counter";
import { upstashClient } from "./clients";
import type { BenchEnvironment } from "./environment";
import { type CountingPassThrough, startCountingPassThrough } from "./pass-through";
import { round } from "./stats";

/** The operations whose wire cost is counted. */
export const WIRE_OPS = ["acquire", "extend", "getStatus", "release", "acquire, held"] as const;
export type WireOp = (typeof WIRE_OPS)[number];

/** Cost of one operation on the wire. */
export interface OpCost {
  readonly requests: number;
  /** Commands billed (see `billing.ts`). */
  readonly commands: number;
  readonly bodyBytes: number;
  readonly routes: string[];
  /** One request body of this operation, as sent (the last one when it took several). */
  readonly sampleBody: string;
}

export interface WireConfigResult {
  readonly autoPipelining: boolean;
  readonly ours: Record<WireOp, OpCost>;
  readonly v021: Record<WireOp, OpCost>;
  /** Ours, first call of each operation after SCRIPT FLUSH (only on this run's own Redis). */
  readonly oursCold?: Partial<Record<WireOp, OpCost>>;
}

export interface WireResults {
  readonly idLength: number;
  readonly repetitions: number;
  readonly configs: WireConfigResult[];
  /** acquire + extend + release request body bytes, with the client's default (auto-pipelining). */
  readonly cycle: { readonly ours: number; readonly v021: number; readonly ratio: number };
  /** Whether the proxy's own counters agree with the pass-through (local stack only). */
  readonly proxyAgrees: boolean | undefined;
  /** Requests the billing rules do not cover, counted as 0 commands, by route (empty: none). */
  readonly uncountedByRoute: Record<string, number>;
}

interface Subject {
  acquire(): Promise<unknown>;
  acquireHeld(): Promise<unknown>;
  extend(): Promise<unknown>;
  getStatus(): Promise<unknown>;
  release(): Promise<unknown>;
}

/** A 54-character lock id, as the goal states it. */
export function lockId(runId: string, name: string, length = 54): string {
  const base = `bench:${runId}:${name}:`;
  return (base + "x".repeat(length)).slice(0, length);
}

/**
 * Section 1: HTTP requests, billed commands and request bytes per operation, ours vs 0.2.1, through
 * one counting pass-through in front of the same endpoint, with the same client configuration.
 * Steady state (our scripts already cached by Redis), plus ours right after SCRIPT FLUSH where allowed.
 */
export async function measureWire(
  env: BenchEnvironment,
  runId: string,
  repetitions: number,
): Promise<WireResults> {
  const http = env.endpoints.http;
  if (!http) throw new Error("no HTTP endpoint");
  const passThrough = await startCountingPassThrough(http.url);
  const proxyBefore = env.proxyStats ? { ...env.proxyStats } : undefined;
  try {
    const configs: WireConfigResult[] = [];
    for (const autoPipelining of [true, false]) {
      const redis = upstashClient({ url: passThrough.url, token: http.token }, { autoPipelining });
      const suffix = autoPipelining ? "ap" : "np";
      const id = lockId(runId, `wire-${suffix}`);
      const blocker = (name: string) => new Lock({ id: lockId(runId, name), redis });

      const ours = new Lock({ id, redis });
      const oursHeldBy = blocker(`wire-${suffix}-held`);
      const oursContender = new Lock({ id: lockId(runId, `wire-${suffix}-held`), redis });
      const oursSubject: Subject = {
        acquire: () => ours.acquire(),
        acquireHeld: () => oursContender.acquire({ retry: { attempts: 1 } }),
        extend: () => ours.extend(1_000),
        getStatus: () => ours.getStatus(),
        release: () => ours.release(),
      };
      const old = new Lock021({ id: lockId(runId, `wire-${suffix}-021`), redis });
      const oldContender = new Lock021({ id: lockId(runId, `wire-${suffix}-held`), redis });
      const oldSubject: Subject = {
        acquire: () => old.acquire(),
        acquireHeld: () => oldContender.acquire({ retry: { attempts: 1, delay: 1 } }),
        extend: () => old.extend(1_000),
        getStatus: () => old.getStatus(),
        release: () => old.release(),
      };
      await oursHeldBy.acquire();
      // Warm-up: Redis caches each of our scripts on first use.
      await runCycle(oursSubject);
      await runCycle(oldSubject);
      const oursCosts = await measureCycles(passThrough, oursSubject, repetitions);
      const oldCosts = await measureCycles(passThrough, oldSubject, repetitions);
      const cold = env.privateRedis ? await measureCold(env, passThrough, oursSubject) : undefined;
      await oursHeldBy.release();
      configs.push({ autoPipelining, ours: oursCosts, v021: oldCosts, ...(cold ? { oursCold: cold } : {}) });
    }
    const main = configs[0] as WireConfigResult;
    const sum = (costs: Record<WireOp, OpCost>) =>
      costs.acquire.bodyBytes + costs.extend.bodyBytes + costs.release.bodyBytes;
    const [ours, v021] = [sum(main.ours), sum(main.v021)];
    const proxyAgrees =
      proxyBefore && env.proxyStats
        ? proxyAgreesWith(env.proxyStats, proxyBefore, [passThrough.counter.counts]) &&
          env.proxyStats.requestBytes - proxyBefore.requestBytes === passThrough.counter.counts.requestBytes
        : undefined;
    return {
      idLength: lockId(runId, "wire-ap").length,
      repetitions,
      configs,
      cycle: { ours, v021, ratio: round(ours / v021, 4) },
      proxyAgrees,
      uncountedByRoute: { ...passThrough.counter.counts.uncountedByRoute },
    };
  } finally {
    await passThrough.close();
  }
}

async function runCycle(subject: Subject): Promise<void> {
  await subject.acquire();
  await subject.extend();
  await subject.getStatus();
  await subject.release();
  await subject.acquireHeld();
}

async function measureCycles(
  passThrough: CountingPassThrough,
  subject: Subject,
  repetitions: number,
): Promise<Record<WireOp, OpCost>> {
  const samples: Record<WireOp, Sample[]> = {
    acquire: [],
    extend: [],
    getStatus: [],
    release: [],
    "acquire, held": [],
  };
  for (let index = 0; index < repetitions; index++) {
    samples.acquire.push(await counted(passThrough, subject.acquire));
    samples.extend.push(await counted(passThrough, subject.extend));
    samples.getStatus.push(await counted(passThrough, subject.getStatus));
    samples.release.push(await counted(passThrough, subject.release));
    samples["acquire, held"].push(await counted(passThrough, subject.acquireHeld));
  }
  return Object.fromEntries(Object.entries(samples).map(([op, list]) => [op, average(list)])) as Record<
    WireOp,
    OpCost
  >;
}

/** Each operation once right after SCRIPT FLUSH: the NOSCRIPT answer, then the script in full. */
async function measureCold(
  env: BenchEnvironment,
  passThrough: CountingPassThrough,
  subject: Subject,
): Promise<Partial<Record<WireOp, OpCost>>> {
  const flush = () => (env.privateRedis as NonNullable<BenchEnvironment["privateRedis"]>).script("FLUSH");
  const cold: Partial<Record<WireOp, OpCost>> = {};
  for (const op of ["acquire", "extend", "getStatus", "release"] as const) {
    await flush();
    cold[op] = average([await counted(passThrough, subject[op])]);
  }
  await flush();
  cold["acquire, held"] = average([await counted(passThrough, subject.acquireHeld)]);
  return cold;
}

/** What one operation sent, and the last request body it sent. */
type Sample = RequestCounts & { readonly lastBody: string };

async function counted(passThrough: CountingPassThrough, operation: () => Promise<unknown>): Promise<Sample> {
  const counts = await passThrough.counter.during(operation);
  return { ...counts, lastBody: passThrough.counter.lastBody };
}

/**
 * Whether the proxy counted, since `before`, the requests and billed commands (commands forwarded
 * plus subscriptions opened) that `counted` add up to. Bytes are left out: the proxy does not read
 * a subscription's body.
 */
export function proxyAgreesWith(
  stats: Readonly<ProxyStats>,
  before: Readonly<ProxyStats>,
  counted: readonly Readonly<RequestCounts>[],
): boolean {
  const [now, then] = [billedAtProxy(stats), billedAtProxy(before)];
  const total = (pick: (counts: Readonly<RequestCounts>) => number) =>
    counted.reduce((sum, counts) => sum + pick(counts), 0);
  return (
    now.requests - then.requests === total((counts) => counts.requests) &&
    now.commands - then.commands === total((counts) => counts.commands)
  );
}

function average(list: Sample[]): OpCost {
  const mean = (field: (counts: Sample) => number) =>
    Math.round(list.reduce((total, counts) => total + field(counts), 0) / list.length);
  return {
    requests: mean((counts) => counts.requests),
    commands: mean((counts) => counts.commands),
    bodyBytes: mean((counts) => counts.requestBytes),
    routes: [...new Set(list.flatMap((counts) => Object.keys(byRoute(counts))))],
    sampleBody: list[list.length - 1]?.lastBody ?? "",
  };
}
