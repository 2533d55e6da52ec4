import { Lock as Lock021 } from "@upstash/lock-0.2.1";
import type { Redis as UpstashRedis } from "@upstash/redis";
import { enableWakeUps, Lock } from "../dist/index.js";
import { byRoute, type RequestCounts } from "../test/support/request-counter";
import { upstashClient } from "./clients";
import type { ContentionResults } from "./contention";
import type { BenchEnvironment } from "./environment";
import { type CountingPassThrough, startCountingPassThrough } from "./pass-through";
import { round } from "./stats";
import { WAIT_ATTEMPTS } from "./variants";
import { lockId, proxyAgreesWith } from "./wire";

/** Requests, billed commands and request body bytes of one operation: means over its samples. */
export interface CommandCost {
  readonly requests: number;
  readonly commands: number;
  readonly bodyBytes: number;
  /** Routes the requests took, e.g. `["/pipeline", "/subscribe"]`. */
  readonly routes: string[];
  readonly samples: number;
  /** Samples whose acquire did not end as the row expects (a contender that failed to win, ...). */
  readonly unexpected: number;
}

/** One row of the table: the same operation with each library's defaults. */
export interface CommandRow {
  readonly id: string;
  readonly operation: string;
  /** What the row does and what its counts include. */
  readonly scenario: string;
  readonly ours: CommandCost;
  readonly v021: CommandCost;
}

export interface CommandsResults {
  readonly rows: CommandRow[];
  /** Whether the proxy counted the same requests and commands as the pass-throughs (local stack only). */
  readonly proxyAgrees: boolean | undefined;
  /** Requests the billing rules do not cover, counted as 0 commands, by route (empty: none). */
  readonly uncountedByRoute: Record<string, number>;
}

/** How many samples each kind of row takes. */
export interface CommandsShape {
  /** Rows that take a round trip or two. */
  readonly fast: number;
  /** Rows that wait: a failed acquire (300 ms), the long wait (2 s). */
  readonly slow: number;
}

/** The retry policy of the long-wait row, which both libraries accept. */
const LONG_WAIT_RETRY = { attempts: 50, delay: 100 } as const;
/** How long the holder keeps the lock in the long-wait rows, ms (about 20 polls 100 ms apart). */
const LONG_WAIT_HOLD_MS = 2_000;
/**
 * The polling long-wait row's holder releases once the waiter's 20th try was answered, not at a time:
 * a fixed time fits 20 or 21 polls of either library depending on each round trip's few ms (0.2.1 got
 * 20.33 and ours 21 in one run, 21 and 21 in the next), a difference of phase, not of policy.
 */
const LONG_WAIT_POLLS = 20;
/** The K of the contended-cycle row. */
export const CYCLE_K = 8;

/** What the table needs of a lock, the same for both libraries. */
interface Subject {
  acquire(): Promise<boolean>;
  extend(amount: number): Promise<boolean>;
  getStatus(): Promise<unknown>;
  release(): Promise<boolean>;
}

interface Library {
  readonly name: "ours" | "v021";
  /** A lock with the library's defaults, `retry` aside when the row needs it. */
  lock(id: string, redis: UpstashRedis, retry?: typeof LONG_WAIT_RETRY): Subject;
}

const LIBRARIES: readonly Library[] = [
  { name: "ours", lock: (id, redis, retry) => new Lock({ id, redis, ...(retry ? { retry } : {}) }) },
  { name: "v021", lock: (id, redis, retry) => new Lock021({ id, redis, ...(retry ? { retry } : {}) }) },
];

const UNCONTENDED = ["acquire", "extend", "getStatus", "release"] as const;
type Uncontended = (typeof UNCONTENDED)[number];

/**
 * Part of section 1: what Upstash would bill for each operation, ours against 0.2.1, each with its
 * defaults (`new Lock({ id, redis })`), counted at a pass-through in front of the endpoint. Holders
 * that the contended rows need run on a second client behind a second pass-through, so their
 * traffic stays out of the rows and the proxy's counters can still be checked against the sum.
 */
export async function measureCommands(
  env: BenchEnvironment,
  runId: string,
  shape: CommandsShape,
): Promise<CommandsResults> {
  const http = env.endpoints.http;
  if (!http) throw new Error("no HTTP endpoint");
  const counted = await startCountingPassThrough(http.url);
  const holders = await startCountingPassThrough(http.url);
  const proxyBefore = env.proxyStats ? { ...env.proxyStats } : undefined;
  try {
    const redis = upstashClient({ url: counted.url, token: http.token });
    const holderRedis = upstashClient({ url: holders.url, token: http.token });
    const fresh = () => upstashClient({ url: counted.url, token: http.token });
    // The contender of the wake-ups row: 0.2.1 has none and ignores it, ours subscribes.
    const wakeRedis = fresh();
    enableWakeUps(wakeRedis);
    const costs: Record<Library["name"], Map<string, CommandCost>> = { ours: new Map(), v021: new Map() };
    for (const library of LIBRARIES) {
      const put = (row: string, cost: CommandCost) => costs[library.name].set(row, cost);
      const id = (name: string) => lockId(runId, `cmd-${library.name}-${name}`);
      const steady = await uncontended(counted, () => library.lock(id("steady"), redis), shape.fast, true);
      const cold = await uncontended(counted, () => library.lock(id("cold"), fresh()), shape.fast, false);
      for (const op of UNCONTENDED) {
        put(op, steady[op]);
        put(`cold ${op}`, cold[op]);
      }
      const holder = () => library.lock(id("contended"), holderRedis);
      const contender = (retry?: typeof LONG_WAIT_RETRY) => library.lock(id("contended"), redis, retry);
      put("contended win", await contendedWin(counted, holder, contender, shape.fast));
      put("contended fail", await contendedFail(counted, holder, contender, shape.slow));
      put("long wait", await longWait(counted, holder, contender, shape.slow, { polls: LONG_WAIT_POLLS }));
      // Each sample on a lock of its own: a wait on the last sample's lock would join its subscription, kept
      // a moment after its wait ended, and pay no SUBSCRIBE, which a wait on its own does.
      let sample = 0;
      const wakeHolder = () => library.lock(id(`wake-${++sample}`), holderRedis);
      const wakeContender = (retry?: typeof LONG_WAIT_RETRY) =>
        library.lock(id(`wake-${sample}`), wakeRedis, retry);
      const hold = { ms: LONG_WAIT_HOLD_MS };
      put("long wait, wake-ups", await longWait(counted, wakeHolder, wakeContender, shape.slow, hold));
    }
    const row = (id: string, operation: string, scenario: string): CommandRow => {
      const [ours, v021] = [costs.ours.get(id), costs.v021.get(id)];
      if (!ours || !v021) throw new Error(`no counts for the row "${id}"`);
      return { id, operation, scenario, ours, v021 };
    };
    const rows: CommandRow[] = [
      ...UNCONTENDED.map((op) =>
        row(op, uncontendedLabel(op), "steady state: the client has run the scripts before (warm-up cycle)"),
      ),
      ...UNCONTENDED.map((op) =>
        row(
          `cold ${op}`,
          `${uncontendedLabel(op)}, cold start`,
          "a fresh client object (a new serverless instance) whose process never ran the scripts; acquire → extend → getStatus → release on it",
        ),
      ),
      row(
        "contended win",
        "acquire, contended, wins",
        "another owner holds the lock and releases it once the contender's first try has been answered; the contender wins on its second try. The holder's acquire and release are not counted (1 command each, both libraries)",
      ),
      row(
        "contended fail",
        "acquire, contended, fails",
        "another owner holds the lock throughout: the default 3 tries each. The holder is not counted",
      ),
      row(
        "long wait",
        "acquire, long wait",
        `\`retry: { attempts: ${LONG_WAIT_RETRY.attempts}, delay: ${LONG_WAIT_RETRY.delay} }\`, another owner releasing once the waiter's ${LONG_WAIT_POLLS}th try was answered (about ${LONG_WAIT_HOLD_MS / 1000} s: by count, not time, so that both libraries' round trips fit the same polls in); the holder not counted`,
      ),
      row(
        "long wait, wake-ups",
        "acquire, long wait, `enableWakeUps`",
        `the long wait on a client for which \`enableWakeUps(redis)\` was called (0.2.1 has no wake-ups and polls as before), another owner releasing ${LONG_WAIT_HOLD_MS / 1000} s after the call: ours subscribes to the lock's releases, the subscription included`,
      ),
    ];
    return {
      rows,
      proxyAgrees:
        proxyBefore && env.proxyStats
          ? proxyAgreesWith(env.proxyStats, proxyBefore, [counted.counter.counts, holders.counter.counts])
          : undefined,
      uncountedByRoute: { ...counted.counter.counts.uncountedByRoute },
    };
  } finally {
    await Promise.all([counted.close(), holders.close()]);
  }
}

function uncontendedLabel(op: Uncontended): string {
  return op === "extend" ? "extend(1000)" : op;
}

/**
 * acquire → extend(1000) → getStatus → release, each counted, `samples` times, on a new lock from
 * `make` each time. With `warm`, one uncounted cycle first.
 */
async function uncontended(
  passThrough: CountingPassThrough,
  make: () => Subject,
  samples: number,
  warm: boolean,
): Promise<Record<Uncontended, CommandCost>> {
  const counts: Record<Uncontended, RequestCounts[]> = {
    acquire: [],
    extend: [],
    getStatus: [],
    release: [],
  };
  const unexpected: Record<Uncontended, number> = { acquire: 0, extend: 0, getStatus: 0, release: 0 };
  const expect = (op: Uncontended, ok: boolean) => {
    if (!ok) unexpected[op] += 1;
  };
  if (warm) {
    const lock = make();
    await lock.acquire();
    await lock.extend(1_000);
    await lock.getStatus();
    await lock.release();
  }
  for (let index = 0; index < samples; index++) {
    const lock = make();
    counts.acquire.push(
      await passThrough.counter.during(async () => expect("acquire", await lock.acquire())),
    );
    counts.extend.push(
      await passThrough.counter.during(async () => expect("extend", await lock.extend(1_000))),
    );
    counts.getStatus.push(
      await passThrough.counter.during(async () =>
        expect("getStatus", (await lock.getStatus()) === "ACQUIRED"),
      ),
    );
    counts.release.push(
      await passThrough.counter.during(async () => expect("release", await lock.release())),
    );
  }
  return {
    acquire: mean(counts.acquire, unexpected.acquire),
    extend: mean(counts.extend, unexpected.extend),
    getStatus: mean(counts.getStatus, unexpected.getStatus),
    release: mean(counts.release, unexpected.release),
  };
}

/** The contender's acquire, where the holder releases as soon as the contender's first try was answered. */
async function contendedWin(
  passThrough: CountingPassThrough,
  holder: () => Subject,
  contender: () => Subject,
  samples: number,
): Promise<CommandCost> {
  const counts: RequestCounts[] = [];
  let unexpected = 0;
  for (let index = 0; index < samples; index++) {
    const [held, waiting] = [holder(), contender()];
    if (!(await held.acquire())) throw new Error("the holder could not take the lock");
    const before = passThrough.counter.snapshot();
    const acquiring = waiting.acquire();
    await passThrough.counter.whenAnswered(before.responses + 1);
    await held.release();
    const won = await acquiring;
    counts.push(passThrough.counter.since(before));
    if (won) await waiting.release();
    else unexpected += 1;
  }
  return mean(counts, unexpected);
}

/** The contender's acquire while the holder keeps the lock throughout. */
async function contendedFail(
  passThrough: CountingPassThrough,
  holder: () => Subject,
  contender: () => Subject,
  samples: number,
): Promise<CommandCost> {
  const counts: RequestCounts[] = [];
  let unexpected = 0;
  for (let index = 0; index < samples; index++) {
    const [held, waiting] = [holder(), contender()];
    if (!(await held.acquire())) throw new Error("the holder could not take the lock");
    let won = false;
    counts.push(
      await passThrough.counter.during(async () => {
        won = await waiting.acquire();
      }),
    );
    if (won) {
      unexpected += 1;
      await waiting.release();
    }
    await held.release();
  }
  return mean(counts, unexpected);
}

/** The contender's acquire with many attempts, the holder releasing after {@link LONG_WAIT_HOLD_MS}. */
async function longWait(
  passThrough: CountingPassThrough,
  holder: () => Subject,
  contender: (retry: typeof LONG_WAIT_RETRY) => Subject,
  samples: number,
  releaseAfter: { readonly polls: number } | { readonly ms: number },
): Promise<CommandCost> {
  const counts: RequestCounts[] = [];
  let unexpected = 0;
  for (let index = 0; index < samples; index++) {
    const [held, waiting] = [holder(), contender(LONG_WAIT_RETRY)];
    if (!(await held.acquire())) throw new Error("the holder could not take the lock");
    let won = false;
    let released: Promise<unknown> = Promise.resolve();
    const { counter } = passThrough;
    counts.push(
      await counter.during(async () => {
        const acquiring = waiting.acquire();
        let timer: ReturnType<typeof setTimeout> | undefined;
        if ("polls" in releaseAfter) {
          // The waiter's answers only: the holder goes through another pass-through.
          const answered = counter.whenAnswered(counter.counts.responses + releaseAfter.polls);
          void answered.then(() => {
            released = held.release();
          });
        } else timer = setTimeout(() => (released = held.release()), releaseAfter.ms);
        won = await acquiring.finally(() => clearTimeout(timer));
      }),
    );
    await released;
    if (won) await waiting.release();
    else {
      unexpected += 1;
      await held.release();
    }
  }
  return mean(counts, unexpected);
}

function mean(list: readonly RequestCounts[], unexpected: number): CommandCost {
  const average = (pick: (counts: RequestCounts) => number) =>
    list.length === 0
      ? Number.NaN
      : round(list.reduce((sum, counts) => sum + pick(counts), 0) / list.length, 2);
  return {
    requests: average((counts) => counts.requests),
    commands: average((counts) => counts.commands),
    bodyBytes: average((counts) => counts.requestBytes),
    routes: [...new Set(list.flatMap((counts) => Object.keys(byRoute(counts))))].sort(),
    samples: list.length,
    unexpected,
  };
}

/**
 * The results with the contended-cycle rows added from section 3: everything the K = 8 workers sent
 * (acquire and release, subscriptions included) per critical section, ours with its defaults
 * (polling) and with wake-ups enabled, against 0.2.1 polling every 100 ms (its default delay).
 */
export function withContendedCycle(
  commands: CommandsResults,
  contention: ContentionResults | undefined,
): CommandsResults {
  const find = (variant: string) =>
    contention?.summary.find((row) => row.variant === variant && row.k === CYCLE_K);
  const old = find("v021-d100");
  if (!old) return commands;
  const cost = (row: NonNullable<typeof old>): CommandCost => ({
    requests: row.requestsPerAcquire,
    commands: row.commandsPerAcquire ?? Number.NaN,
    bodyBytes: row.requestBytesPerAcquire ?? Number.NaN,
    routes: [],
    samples: row.rounds,
    unexpected: row.failures,
  });
  const both = `both with \`retry: { attempts: ${WAIT_ATTEMPTS.toLocaleString("en")} }\`, 0.2.1 polling every 100 ms (its default)`;
  const rows: CommandRow[] = [];
  const ours = find("ours-poll");
  if (ours) {
    rows.push({
      id: "contended cycle",
      operation: `acquire + release, K = ${CYCLE_K} contending`,
      scenario: `section 3: everything the ${CYCLE_K} workers sent ÷ critical sections (medians over ${ours.rounds} rounds); ${both}, ours with its defaults (polling every 100 ms)`,
      ours: cost(ours),
      v021: cost(old),
    });
  }
  const woken = find("ours-wake");
  if (woken) {
    rows.push({
      id: "contended cycle, wake-ups",
      operation: `acquire + release, K = ${CYCLE_K} contending, \`enableWakeUps\``,
      scenario: `section 3, as above, ours with \`enableWakeUps(redis)\` (subscribing only to long single-holder waits), subscriptions included`,
      ours: cost(woken),
      v021: cost(old),
    });
  }
  return { ...commands, rows: [...commands.rows, ...rows] };
}
