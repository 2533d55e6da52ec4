// The benchmark: `npm run bench` (or `npx tsx bench/run.ts` after `npm run build`: every section
// measures the built package in dist/, as users run it); `npm run bench -- --quick` runs every
// section briefly, a smoke run that proves the bench works end to end in about two minutes.
// Starts its own redis-server and Upstash REST proxy (unless UPSTASH_REDIS_REST_URL/TOKEN are set),
// runs every section side by side, and writes what a reader needs: the report in markdown
// (latest.md), its chart (contention.svg) and the handover table (handover.md), in bench/results/,
// or in .tmp/bench-quick/ for a quick run, which must not replace a real run's results; and it refills
// the tables docs/ quotes (bench/docs.ts; a quick run, copies beside its results). It prints the report too. Everything it starts is stopped at the end and on Ctrl-C.
import { mkdir, writeFile } from "node:fs/promises";
import os from "node:os";
import { relative } from "node:path";
import { fileURLToPath } from "node:url";
import { contentionChart } from "./chart";
import { killChildren } from "./children";
import { type CommandsResults, measureCommands, withContendedCycle } from "./commands";
import { type ContentionResults, measureContention, WorkerPool } from "./contention";
import { refillDocs } from "./docs";
import { type BenchEnvironment, machineInfo, prepareEnvironment } from "./environment";
import { evaluateGoals } from "./goals";
import { type HandoverRow, handoverMarkdown, measureHandover } from "./handover";
import { type LatencyResults, measureLatency } from "./latency";
import { markdownReport } from "./report";
import type { BenchResults } from "./results";
import { measureScale, type ScaleResults } from "./scale";
import { measureSize, type SizeResults } from "./size";
import type { VariantId } from "./variants";
import { measureWire, type WireResults } from "./wire";

const quick = process.argv.includes("--quick");
const log = (line: string) => process.stderr.write(`${line}\n`);

/** How much of everything to measure. */
const SHAPE = quick
  ? {
      wireRepetitions: 3,
      commands: { fast: 3, slow: 1 },
      httpLatency: { rounds: 8, iterations: 20, warmup: 40 },
      tcpLatency: { rounds: 8, iterations: 100, warmup: 300 },
      ks: [1, 8],
      durationMs: 1_000,
      roundsAt: (_k: number) => 1,
      warmUpMs: 500,
      permits: { ks: [4, 8], roundsAt: (_k: number) => 1 },
      scale: { count: 10_000, leaseMs: 3_000, intervalMs: 1_000, windowMs: 2_000 },
      handoverRounds: 8,
    }
  : {
      wireRepetitions: 10,
      commands: { fast: 10, slow: 3 },
      // Many short rounds, each variant's batch next to the others', and a warm-up long enough for
      // the JIT to settle: the CPU ratio is the median of per-round ratios, robust to a noisy machine.
      httpLatency: { rounds: 40, iterations: 75, warmup: 300 },
      tcpLatency: { rounds: 40, iterations: 300, warmup: 2_000 },
      ks: [1, 2, 4, 8, 16],
      durationMs: 5_000,
      // The goals are stated at K = 8 and 16: repeat those and report medians.
      roundsAt: (k: number) => (k === 8 || k === 16 ? 3 : 1),
      warmUpMs: 1_000,
      // Permits: one round per K (no throughput goal rests on them).
      permits: { ks: [4, 8, 16], roundsAt: (_k: number) => 1 },
      scale: { count: 10_000, leaseMs: 3_000, intervalMs: 1_000, windowMs: 10_000 },
      handoverRounds: 40,
    };
/** Where the run writes its files. */
const RESULTS = new URL(quick ? "../.tmp/bench-quick/" : "./results/", import.meta.url);
const WORK_MS = 5;
const HTTP_CONTENTION: VariantId[] = ["ours-wake", "ours-fair", "ours-poll", "v021-d100", "v021-d10"];
const TCP_CONTENTION: VariantId[] = ["ours-wake", "ours-fair", "ours-poll", "redlock", "semaphore"];
/** Semaphores (limit 3): redis-semaphore speaks ioredis's `eval`, so it runs over TCP only. */
const HTTP_PERMITS: VariantId[] = ["sem-ours", "sem-ours-fair"];
const TCP_PERMITS: VariantId[] = ["sem-ours", "sem-ours-fair", "sem-redis-semaphore"];

let env: BenchEnvironment | undefined;
let pool: WorkerPool | undefined;
let interrupted = false;

async function cleanUp(): Promise<void> {
  const stopping = [pool?.close(), env?.stop()];
  pool = undefined;
  env = undefined;
  await Promise.allSettled(stopping);
}

for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.once(signal, () => {
    interrupted = true;
    log(`\n${signal}: stopping workers and servers`);
    killChildren();
    cleanUp().finally(() => process.exit(130));
  });
}

async function main(): Promise<void> {
  const started = Date.now();
  const runId = `${started.toString(36)}${Math.random().toString(36).slice(2, 6)}`;
  const keyBase = `bench:${runId}`;
  env = await prepareEnvironment();
  const machine = machineInfo(env.redisVersion);
  log(
    `bench ${quick ? "(quick) " : ""}on ${machine.cpu} ×${machine.cores}, Node ${machine.node}, Redis ${machine.redis}`,
  );
  log(`HTTP: ${env.httpTarget}; TCP: ${env.tcpTarget ?? "skipped"}; keys under ${keyBase}:`);
  const skipped: BenchResults["skipped"] = [];
  const attempt = async <T>(section: string, work: () => Promise<T>): Promise<T | undefined> => {
    if (interrupted) return undefined;
    log(`\n${section}`);
    const sectionStarted = Date.now();
    try {
      const result = await work();
      log(`  done in ${((Date.now() - sectionStarted) / 1000).toFixed(1)} s`);
      return result;
    } catch (error) {
      if (interrupted) return undefined;
      const reason = error instanceof Error ? error.message : String(error);
      log(`  FAILED: ${reason}`);
      skipped.push({ section, reason: `failed: ${reason.split("\n")[0]}` });
      return undefined;
    }
  };
  const skip = (section: string, reason: string) => {
    log(`\n${section}: skipped (${reason})`);
    skipped.push({ section, reason });
  };
  const current = env;
  const tcp = current.endpoints.redisUrl !== undefined;
  const noTcp =
    "no TCP Redis: set REDIS_URL (UPSTASH_REDIS_REST_URL is set, so no local redis-server was started)";

  const wire: WireResults | undefined = await attempt("1. Wire cost", () =>
    measureWire(current, runId, SHAPE.wireRepetitions),
  );
  const commandsMeasured: CommandsResults | undefined = await attempt(
    "1. Wire cost: billed commands per operation",
    () => measureCommands(current, runId, SHAPE.commands),
  );
  const latency: { http?: LatencyResults; tcp?: LatencyResults } = {};
  const httpLatency = await attempt("2. Uncontended latency (HTTP)", () =>
    measureLatency(current, "http", `${keyBase}:lat`, SHAPE.httpLatency),
  );
  if (httpLatency) latency.http = httpLatency;
  if (tcp) {
    const tcpLatency = await attempt("4a. Uncontended latency (TCP)", () =>
      measureLatency(current, "tcp", `${keyBase}:lat`, SHAPE.tcpLatency),
    );
    if (tcpLatency) latency.tcp = tcpLatency;
  } else skip("4a. Uncontended latency (TCP)", noTcp);

  const contention: { http?: ContentionResults; tcp?: ContentionResults } = {};
  const permits: { http?: ContentionResults; tcp?: ContentionResults } = {};
  const maxK = Math.max(...SHAPE.ks, ...SHAPE.permits.ks);
  pool = await attempt(`Starting ${maxK} worker processes`, () => WorkerPool.start(maxK, current.endpoints));
  if (pool) {
    const workers = pool;
    const shape = {
      ks: SHAPE.ks,
      durationMs: SHAPE.durationMs,
      workMs: WORK_MS,
      roundsAt: SHAPE.roundsAt,
      warmUpMs: SHAPE.warmUpMs,
    };
    const http = await attempt("3. Contention (HTTP)", () =>
      measureContention(current, workers, "http", HTTP_CONTENTION, shape, `${keyBase}:c`, log),
    );
    if (http) contention.http = http;
    if (tcp) {
      const overTcp = await attempt("4b. Contention (TCP)", () =>
        measureContention(current, workers, "tcp", TCP_CONTENTION, shape, `${keyBase}:c`, log),
      );
      if (overTcp) contention.tcp = overTcp;
    } else skip("4b. Contention (TCP)", noTcp);
    const permitShape = { ...shape, ks: SHAPE.permits.ks, roundsAt: SHAPE.permits.roundsAt };
    const httpPermits = await attempt("7a. Permits (HTTP)", () =>
      measureContention(current, workers, "http", HTTP_PERMITS, permitShape, `${keyBase}:p`, log),
    );
    if (httpPermits) permits.http = httpPermits;
    if (tcp) {
      const tcpPermits = await attempt("7b. Permits (TCP)", () =>
        measureContention(current, workers, "tcp", TCP_PERMITS, permitShape, `${keyBase}:p`, log),
      );
      if (tcpPermits) permits.tcp = tcpPermits;
    } else skip("7b. Permits (TCP)", noTcp);
    await workers.close();
    pool = undefined;
  }

  const size: SizeResults | undefined = await attempt("5. Size", () => measureSize(log));
  let scale: ScaleResults | undefined;
  if (tcp) {
    const redisUrl = current.endpoints.redisUrl as string;
    scale = await attempt("6. Scale", () => measureScale(redisUrl, `${keyBase}:scale`, SHAPE.scale));
  } else skip("6. Scale", noTcp);

  const handover: HandoverRow[] | undefined = await attempt("8. Handover to a waiting process", () =>
    measureHandover(current, SHAPE.handoverRounds),
  );

  if (interrupted) return;
  const commands = commandsMeasured && withContendedCycle(commandsMeasured, contention.http);
  const results: BenchResults = {
    date: new Date(started).toISOString(),
    command: `npx tsx bench/run.ts${quick ? " --quick" : ""}`,
    quick,
    durationSeconds: Math.round((Date.now() - started) / 1000),
    machine: { ...machine, loadAverageAtEnd: os.loadavg().map((load) => Math.round(load * 100) / 100) },
    targets: { http: current.httpTarget, tcp: current.tcpTarget },
    notes: [...current.notes],
    skipped,
    ...(wire ? { wire } : {}),
    ...(commands ? { commands } : {}),
    latency,
    contention,
    permits,
    ...(size ? { size } : {}),
    ...(scale ? { scale } : {}),
    handover: handover !== undefined,
    goals: evaluateGoals({ wire, commands, latency, contention, permits, size, handover }),
  };
  const markdown = markdownReport(results);
  await mkdir(RESULTS, { recursive: true });
  const written = ["latest.md"];
  await writeFile(new URL("latest.md", RESULTS), markdown);
  const caption = `${machine.cpu} ×${machine.cores}, Node ${machine.node}, Redis ${machine.redis}, ${results.date.slice(0, 10)}${quick ? " (quick run)" : ""}`;
  const charted = [contention.http, contention.tcp, permits.http, permits.tcp].filter(
    (run): run is ContentionResults => run !== undefined,
  );
  if (charted.length > 0) {
    await writeFile(new URL("contention.svg", RESULTS), contentionChart(charted, caption));
    written.push("contention.svg");
  }
  if (handover) {
    await writeFile(new URL("handover.md", RESULTS), handoverMarkdown(handover, caption));
    written.push("handover.md");
  }
  // A quick run refills copies (in .tmp/bench-quick/docs/): it proves the refill, never quotes itself.
  const docs = new URL("../docs/", import.meta.url);
  const docsOut = quick ? new URL("docs/", RESULTS) : docs;
  await mkdir(docsOut, { recursive: true });
  const refilled = await refillDocs(results, handover, docs, docsOut);
  process.stdout.write(`\n${markdown}`);
  log(`Wrote ${written.join(", ")} in ${relative(process.cwd(), fileURLToPath(RESULTS))}/`);
  for (const [file, tables] of Object.entries(refilled))
    log(
      `Refilled ${relative(process.cwd(), fileURLToPath(new URL(file, docsOut)))}: ${tables.join(", ") || "no table"}`,
    );
}

main()
  .catch((error: unknown) => {
    log(`bench failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
    process.exitCode = 1;
  })
  .finally(() => cleanUp());
