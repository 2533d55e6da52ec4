import { addCounts, billedAtProxy, byRoute, emptyCounts } from "../test/support/request-counter";
import { Child } from "./children";
import type { Endpoints } from "./clients";
import { sharedNow, sleep } from "./clock";
import type { RunMessage, WorkerReport } from "./contention-worker";
import type { BenchEnvironment } from "./environment";
import { diffServer, readServerCounters, type ServerCounters } from "./redis-info";
import { median, round, type Summary, summarize } from "./stats";
import { CONNECTION_SETUP_COMMANDS, PUBSUB_COMMANDS } from "./taps";
import { permitsOf, type Transport, VARIANT_LABELS, type VariantId, WAKE_UP_VARIANTS } from "./variants";

/** One run of K workers on one variant. */
export interface ContentionPoint {
  readonly transport: Transport;
  readonly variant: VariantId;
  /** How many may hold at once: 1 for a lock, the limit of a semaphore. */
  readonly permits: number;
  readonly k: number;
  readonly round: number;
  readonly durationMs: number;
  /** Critical sections whose acquire resolved inside the timed window. */
  readonly sections: number;
  readonly sectionsPerSecond: number;
  /**
   * Next holder's acquire resolved − previous holder's release called, ms (every section). With
   * `permits` P, the n-th acquisition (in time order) takes the place freed by the (n − P)-th
   * release: a permit changing hands.
   */
  readonly handover: Summary;
  /**
   * The same, only where the next holder is another worker: a waiter taking over. Where the releasing
   * worker takes the lock straight back (it does not wait, the others are asleep between polls), the
   * gap is just its own two round trips, which flatters polling.
   */
  readonly waiterHandover: Summary;
  /** acquire() called → resolved, ms, per section: how long callers waited for the lock. */
  readonly acquireWait: Summary;
  /** Share of sections taken by the worker that held the lock just before. */
  readonly sameWorkerShare: number;
  /**
   * Sections that began before the release that freed their place was even called, so that more
   * than `permits` held at once (must be 0).
   */
  readonly overlaps: number;
  /** Sections per worker in the window. */
  readonly perWorker: number[];
  readonly fairnessMin: number;
  readonly fairnessMax: number;
  /** The least served worker's sections ÷ the mean per worker: 1 is perfectly even, 0 starved. */
  readonly fairnessRatio: number;
  /** Every section of the point, the tail after the window included: the denominator of the costs. */
  readonly allSections: number;
  /**
   * HTTP: requests the workers' clients sent (counted at `fetch`), per section. TCP: commands the
   * clients sent (round trips), per section. Both include the release and any subscription traffic.
   */
  readonly requestsPerAcquire: number;
  /**
   * HTTP: commands Upstash would bill for those requests (each command of a pipeline, each
   * subscription), per section. Undefined for TCP, where requests are already commands.
   */
  readonly commandsPerAcquire?: number;
  /** HTTP: request body bytes the clients sent, per section. */
  readonly requestBytesPerAcquire?: number;
  /** HTTP: requests whose commands the billing rules do not cover (counted as 0), by route. */
  readonly uncountedByRoute?: Record<string, number>;
  /** Of those, subscription requests (HTTP `/subscribe`) or pub/sub + connection-setup commands (TCP). */
  readonly wakeUpRequestsPerAcquire: number;
  /** Subscription requests that failed (HTTP): wake-ups were not active. */
  readonly failedSubscriptions: number;
  /** Whether waiters were actually woken by release announcements (ours, wake-ups only). */
  readonly wakeUpsActive: boolean | undefined;
  /**
   * HTTP, local stack: requests and billed commands (commands forwarded plus subscriptions) the
   * proxy itself counted, per section.
   */
  readonly proxyRequestsPerAcquire?: number;
  readonly proxyCommandsPerAcquire?: number;
  /** TCP: commands Redis executed (Lua's inner commands included) and connections opened, per section. */
  readonly serverCommandsPerAcquire?: number;
  readonly connectionsPerAcquire?: number;
  readonly failures: number;
  readonly releaseMisses: number;
  readonly firstError?: string;
}

/** Median over rounds of one (variant, K). */
export interface ContentionSummary {
  readonly transport: Transport;
  readonly variant: VariantId;
  readonly label: string;
  readonly permits: number;
  readonly k: number;
  readonly rounds: number;
  readonly sectionsPerSecond: number;
  readonly handoverP50: number;
  readonly handoverP99: number;
  /** NaN where no section passed between workers (K = 1). */
  readonly waiterHandoverP50: number;
  readonly waiterHandoverP99: number;
  readonly sameWorkerShare: number;
  readonly acquireWaitP50: number;
  readonly acquireWaitP99: number;
  readonly fairnessMin: number;
  readonly fairnessMax: number;
  /** Median over rounds of the least served worker's sections ÷ the mean per worker. */
  readonly fairnessRatio: number;
  /** The lowest of those ratios over the rounds. */
  readonly fairnessRatioWorst: number;
  readonly requestsPerAcquire: number;
  readonly commandsPerAcquire?: number;
  readonly requestBytesPerAcquire?: number;
  readonly wakeUpRequestsPerAcquire: number;
  readonly serverCommandsPerAcquire?: number;
  readonly connectionsPerAcquire?: number;
  readonly proxyRequestsPerAcquire?: number;
  readonly proxyCommandsPerAcquire?: number;
  readonly wakeUpsActive: boolean | undefined;
  readonly overlaps: number;
  readonly failures: number;
}

export interface ContentionResults {
  readonly transport: Transport;
  /** How many may hold at once, the same for every variant of the run: 1 for locks, else a semaphore's limit. */
  readonly permits: number;
  readonly ks: number[];
  readonly durationMs: number;
  readonly workMs: number;
  /** The discarded warm-up point's length per variant, ms (0: none). */
  readonly warmUpMs: number;
  readonly points: ContentionPoint[];
  readonly summary: ContentionSummary[];
}

/** K worker processes, started once and reused by every point. */
export class WorkerPool {
  readonly #workers: Child[];

  private constructor(workers: Child[]) {
    this.#workers = workers;
  }

  static async start(size: number, endpoints: Endpoints): Promise<WorkerPool> {
    const workers = Array.from({ length: size }, () => new Child("./contention-worker.ts", endpoints));
    const pool = new WorkerPool(workers);
    try {
      await Promise.all(workers.map((worker) => worker.next()));
    } catch (error) {
      await pool.close();
      throw error;
    }
    return pool;
  }

  async run(k: number, message: Omit<RunMessage, "type">, timeoutMs: number): Promise<WorkerReport[]> {
    if (k > this.#workers.length)
      throw new RangeError(`K = ${k} needs more than ${this.#workers.length} workers`);
    const workers = this.#workers.slice(0, k);
    for (const worker of workers) worker.send({ type: "run", ...message });
    const answers = await Promise.all(workers.map((worker) => worker.next(timeoutMs)));
    return answers.map((answer) => answer.result as WorkerReport);
  }

  async close(): Promise<void> {
    await Promise.all(this.#workers.map((worker) => worker.stop()));
  }
}

interface Shape {
  readonly ks: readonly number[];
  readonly durationMs: number;
  readonly workMs: number;
  /** Rounds at each K (medians are reported). */
  readonly roundsAt: (k: number) => number;
  /**
   * Length of a discarded point per variant, at the largest K, before the first measured one: the
   * first point after the workers start runs slower (cold JIT, new connections), whichever variant
   * it is. 0: none.
   */
  readonly warmUpMs: number;
}

/**
 * Sections 3 and 4 (contended): every variant at every K, variants interleaved within each K and
 * their order rotated from round to round, after a discarded warm-up point per variant.
 */
export async function measureContention(
  env: BenchEnvironment,
  pool: WorkerPool,
  transport: Transport,
  variants: readonly VariantId[],
  shape: Shape,
  keyBase: string,
  log: (line: string) => void,
): Promise<ContentionResults> {
  const permits = permitsOf(variants[0] as VariantId);
  if (variants.some((variant) => permitsOf(variant) !== permits))
    throw new Error("a contention run compares variants with the same number of permits");
  const points: ContentionPoint[] = [];
  if (shape.warmUpMs > 0) {
    const k = Math.max(...shape.ks);
    for (const variant of variants) {
      await runPoint(env, pool, {
        transport,
        variant,
        k,
        round: -1,
        key: `${keyBase}:${transport}:${variant}:warm-up`,
        durationMs: shape.warmUpMs,
        workMs: shape.workMs,
      });
      await sleep(150);
    }
    log(`  ${transport} warm-up: every variant for ${shape.warmUpMs} ms at K = ${k}, discarded`);
  }
  for (const k of shape.ks) {
    for (let round = 0; round < shape.roundsAt(k); round++) {
      const order = variants.map((_, index) => variants[(index + round + k) % variants.length] as VariantId);
      for (const variant of order) {
        const point = await runPoint(env, pool, {
          transport,
          variant,
          k,
          round,
          key: `${keyBase}:${transport}:${variant}:k${k}:r${round}`,
          durationMs: shape.durationMs,
          workMs: shape.workMs,
        });
        points.push(point);
        log(
          `  ${transport} K=${String(k).padStart(2)} ${VARIANT_LABELS[variant].padEnd(52)} ` +
            `${point.sectionsPerSecond.toFixed(1).padStart(6)}/s  handover p50 ${point.handover.p50.toFixed(2)} ms, to a waiter ${point.waiterHandover.p50.toFixed(2)} ms  ` +
            `fairness ${point.fairnessRatio.toFixed(2)}  ` +
            `${point.requestsPerAcquire.toFixed(2)} req${point.commandsPerAcquire === undefined ? "" : `, ${point.commandsPerAcquire.toFixed(2)} cmd`}/acquire${point.failures ? `  ${point.failures} failures` : ""}`,
        );
        await sleep(150);
      }
    }
  }
  return {
    transport,
    permits,
    ks: [...shape.ks],
    durationMs: shape.durationMs,
    workMs: shape.workMs,
    warmUpMs: shape.warmUpMs,
    points,
    summary: summarizePoints(points, variants),
  };
}

interface PointSpec {
  readonly transport: Transport;
  readonly variant: VariantId;
  readonly k: number;
  readonly round: number;
  readonly key: string;
  readonly durationMs: number;
  readonly workMs: number;
}

async function runPoint(env: BenchEnvironment, pool: WorkerPool, spec: PointSpec): Promise<ContentionPoint> {
  const proxyBefore = spec.transport === "http" && env.proxyStats ? billedAtProxy(env.proxyStats) : undefined;
  const serverBefore: ServerCounters | undefined =
    spec.transport === "tcp" && env.tcpAdmin ? await readServerCounters(env.tcpAdmin) : undefined;
  // Time for the message to reach every worker before the clock starts.
  const startAt = sharedNow() + 250 + 10 * spec.k;
  const endAt = startAt + spec.durationMs;
  const reports = await pool.run(
    spec.k,
    {
      variant: spec.variant,
      transport: spec.transport,
      key: spec.key,
      startAt,
      endAt,
      workMs: spec.workMs,
    },
    spec.durationMs + 180_000,
  );
  const serverAfter = serverBefore && env.tcpAdmin ? await readServerCounters(env.tcpAdmin) : undefined;
  const proxyAfter = proxyBefore && env.proxyStats ? billedAtProxy(env.proxyStats) : undefined;

  const sections = reports
    .flatMap((report, worker) =>
      triples(report.sections).map(([calledAt, acquiredAt, releaseAt]) => ({
        calledAt,
        acquiredAt,
        releaseAt,
        worker,
      })),
    )
    .sort((a, b) => a.acquiredAt - b.acquiredAt);
  const releases = [...sections].sort((a, b) => a.releaseAt - b.releaseAt);
  const permits = permitsOf(spec.variant);
  const inWindow = sections.filter((section) => section.acquiredAt >= startAt && section.acquiredAt <= endAt);
  const gaps: number[] = [];
  const waiterGaps: number[] = [];
  // The first `permits` sections took free places; each later one, the place of the release
  // `permits` before it in time order (for a lock, simply the section before).
  for (let index = permits; index < sections.length; index++) {
    const current = sections[index] as (typeof sections)[0];
    const freed = releases[index - permits] as (typeof sections)[0];
    if (current.acquiredAt > endAt) break;
    gaps.push(current.acquiredAt - freed.releaseAt);
    if (current.worker !== freed.worker) waiterGaps.push(current.acquiredAt - freed.releaseAt);
  }
  const perWorker = reports.map(
    (_, worker) => inWindow.filter((section) => section.worker === worker).length,
  );
  const meanPerWorker = inWindow.length / Math.max(1, reports.length);
  const all = Math.max(1, sections.length);
  const http = emptyCounts();
  const tcp = emptyCounts();
  for (const report of reports) {
    addCounts(http, report.http);
    addCounts(tcp, report.tcp);
  }
  const sumOf = (names: Set<string>) =>
    Object.entries(tcp.byPath).reduce((total, [name, count]) => total + (names.has(name) ? count : 0), 0);
  const onSubscribeRoutes = (record: Record<string, number>) =>
    (record["/subscribe"] ?? 0) + (record["/psubscribe"] ?? 0);
  const subscribeRequests = onSubscribeRoutes(byRoute(http));
  const failedSubscriptions = onSubscribeRoutes(http.failedByRoute);
  const pubsubCommands = sumOf(PUBSUB_COMMANDS);
  const wakeUpTraffic =
    spec.transport === "http" ? subscribeRequests : pubsubCommands + sumOf(CONNECTION_SETUP_COMMANDS);
  const server = serverBefore && serverAfter ? diffServer(serverAfter, serverBefore) : undefined;
  const failures = reports.reduce((total, report) => total + report.failures, 0);
  const firstError = reports.find((report) => report.firstError)?.firstError;
  return {
    transport: spec.transport,
    variant: spec.variant,
    permits,
    k: spec.k,
    round: spec.round,
    durationMs: spec.durationMs,
    sections: inWindow.length,
    sectionsPerSecond: round(inWindow.length / (spec.durationMs / 1000), 2),
    handover: roundSummary(summarize(gaps)),
    waiterHandover: roundSummary(summarize(waiterGaps)),
    acquireWait: roundSummary(summarize(inWindow.map((section) => section.acquiredAt - section.calledAt))),
    sameWorkerShare: round(gaps.length === 0 ? 0 : (gaps.length - waiterGaps.length) / gaps.length),
    overlaps: gaps.filter((gap) => gap < -0.25).length,
    perWorker,
    fairnessMin: Math.min(...perWorker),
    fairnessMax: Math.max(...perWorker),
    fairnessRatio: meanPerWorker === 0 ? 0 : round(Math.min(...perWorker) / meanPerWorker),
    allSections: sections.length,
    requestsPerAcquire: round((spec.transport === "http" ? http : tcp).requests / all),
    ...(spec.transport === "http"
      ? {
          commandsPerAcquire: round(http.commands / all),
          requestBytesPerAcquire: round(http.requestBytes / all, 1),
          uncountedByRoute: http.uncountedByRoute,
        }
      : {}),
    wakeUpRequestsPerAcquire: round(wakeUpTraffic / all),
    failedSubscriptions,
    wakeUpsActive: wakeUpsActive(spec, subscribeRequests, failedSubscriptions, pubsubCommands),
    ...(proxyBefore && proxyAfter
      ? {
          proxyRequestsPerAcquire: round((proxyAfter.requests - proxyBefore.requests) / all),
          proxyCommandsPerAcquire: round((proxyAfter.commands - proxyBefore.commands) / all),
        }
      : {}),
    ...(server
      ? {
          serverCommandsPerAcquire: round(server.commands / all),
          connectionsPerAcquire: round(server.connections / all),
        }
      : {}),
    failures,
    releaseMisses: reports.reduce((total, report) => total + report.releaseMisses, 0),
    ...(firstError === undefined ? {} : { firstError }),
  };
}

/**
 * For ours with wake-ups: whether waiters subscribed successfully. Undefined when nobody
 * subscribed (K = 1, or no wait long enough) or for other variants.
 */
function wakeUpsActive(
  spec: PointSpec,
  subscribes: number,
  failed: number,
  pubsub: number,
): boolean | undefined {
  if (!WAKE_UP_VARIANTS.has(spec.variant)) return undefined;
  if (spec.transport === "tcp") return pubsub > 0 ? true : undefined;
  return subscribes === 0 ? undefined : subscribes > failed;
}

function triples(flat: number[]): [number, number, number][] {
  const result: [number, number, number][] = [];
  for (let index = 0; index + 2 < flat.length; index += 3) {
    result.push([flat[index] as number, flat[index + 1] as number, flat[index + 2] as number]);
  }
  return result;
}

function roundSummary(summary: Summary): Summary {
  return {
    n: summary.n,
    p50: round(summary.p50),
    p99: round(summary.p99),
    mean: round(summary.mean),
    min: round(summary.min),
    max: round(summary.max),
  };
}

/** Medians per (variant, K), ordered by K, then as `variants` lists them. */
function summarizePoints(points: ContentionPoint[], variants: readonly VariantId[]): ContentionSummary[] {
  const groups = new Map<string, ContentionPoint[]>();
  const ordered = [...points].sort(
    (a, b) => a.k - b.k || variants.indexOf(a.variant) - variants.indexOf(b.variant),
  );
  for (const point of ordered) {
    const key = `${point.variant}|${point.k}`;
    groups.set(key, [...(groups.get(key) ?? []), point]);
  }
  return [...groups.values()].map((group) => {
    const first = group[0] as ContentionPoint;
    const med = (pick: (point: ContentionPoint) => number) => round(median(group.map(pick)));
    const finiteMedian = (pick: (point: ContentionPoint) => number) => {
      const values = group.map(pick).filter(Number.isFinite);
      return values.length > 0 ? round(median(values)) : Number.NaN;
    };
    const optional = (pick: (point: ContentionPoint) => number | undefined) => {
      const values = group.map(pick).filter((value): value is number => value !== undefined);
      return values.length > 0 ? round(median(values)) : undefined;
    };
    const server = optional((point) => point.serverCommandsPerAcquire);
    const connections = optional((point) => point.connectionsPerAcquire);
    const proxy = optional((point) => point.proxyRequestsPerAcquire);
    const proxyCommands = optional((point) => point.proxyCommandsPerAcquire);
    const commands = optional((point) => point.commandsPerAcquire);
    const bytes = optional((point) => point.requestBytesPerAcquire);
    return {
      transport: first.transport,
      variant: first.variant,
      label: VARIANT_LABELS[first.variant],
      permits: first.permits,
      k: first.k,
      rounds: group.length,
      sectionsPerSecond: med((point) => point.sectionsPerSecond),
      handoverP50: med((point) => point.handover.p50),
      handoverP99: med((point) => point.handover.p99),
      // A round where no section passed between workers has none (NaN): the median is of the others.
      waiterHandoverP50: finiteMedian((point) => point.waiterHandover.p50),
      waiterHandoverP99: finiteMedian((point) => point.waiterHandover.p99),
      sameWorkerShare: med((point) => point.sameWorkerShare),
      acquireWaitP50: med((point) => point.acquireWait.p50),
      acquireWaitP99: med((point) => point.acquireWait.p99),
      fairnessMin: med((point) => point.fairnessMin),
      fairnessMax: med((point) => point.fairnessMax),
      fairnessRatio: med((point) => point.fairnessRatio),
      fairnessRatioWorst: Math.min(...group.map((point) => point.fairnessRatio)),
      requestsPerAcquire: med((point) => point.requestsPerAcquire),
      ...(commands === undefined ? {} : { commandsPerAcquire: commands }),
      ...(bytes === undefined ? {} : { requestBytesPerAcquire: round(bytes, 1) }),
      wakeUpRequestsPerAcquire: med((point) => point.wakeUpRequestsPerAcquire),
      ...(server === undefined ? {} : { serverCommandsPerAcquire: server }),
      ...(connections === undefined ? {} : { connectionsPerAcquire: connections }),
      ...(proxy === undefined ? {} : { proxyRequestsPerAcquire: proxy }),
      ...(proxyCommands === undefined ? {} : { proxyCommandsPerAcquire: proxyCommands }),
      wakeUpsActive:
        first.wakeUpsActive === undefined ? undefined : group.some((point) => point.wakeUpsActive),
      overlaps: group.reduce((total, point) => total + point.overlaps, 0),
      failures: group.reduce((total, point) => total + point.failures, 0),
    };
  });
}
