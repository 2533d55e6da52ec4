import type { CommandCost, CommandRow, CommandsResults } from "./commands";
import type { ContentionResults } from "./contention";
import { LOCK_GZIP_BUDGET } from "./goals";
import type { LatencyResults } from "./latency";
import type { BenchResults } from "./results";
import { interquartile, median } from "./stats";
import { SEMAPHORE_LIMIT, VARIANT_LABELS, WAIT_ATTEMPTS } from "./variants";
import { WIRE_OPS, type WireConfigResult } from "./wire";

/** The markdown report: written to bench/results/latest.md and printed at the end of a run. */
export function markdownReport(results: BenchResults): string {
  const out: string[] = [];
  const { machine } = results;
  out.push(
    "# Benchmark results",
    "",
    `- **Date:** ${results.date} · **Command:** \`${results.command}\` · **Duration:** ${results.durationSeconds} s${results.quick ? " · **QUICK (smoke) run: few samples, do not quote**" : ""}`,
    `- **Machine:** ${machine.cpu}, ${machine.cores} cores, ${machine.memoryGiB} GiB, ${machine.os}; load average ${machine.loadAverageAtStart.join(" / ")} at start, ${machine.loadAverageAtEnd.join(" / ")} at end`,
    `- **Software:** Node ${machine.node}, Redis ${machine.redis}, @upstash/redis ${machine.upstashRedisClient}, ioredis ${machine.ioredis}`,
    `- **Targets:** HTTP: ${results.targets.http}; TCP: ${results.targets.tcp ?? "skipped"}.${results.targets.http === "local proxy" ? " Client processes, the proxy and redis-server share the machine's cores." : ""}`,
    ...results.notes.map((note) => `- ${note}`),
    ...results.skipped.map((skip) => `- **Skipped** ${skip.section}: ${skip.reason}`),
    "",
    "## Goals",
    "",
    "| Section | Goal | Target | Measured | Result |",
    "| --- | --- | --- | --- | --- |",
    ...results.goals.map(
      (goal) =>
        `| ${goal.section} | ${goal.goal} | ${goal.target} | ${goal.measured} | **${goal.verdict}**${goal.note ? ` (${goal.note})` : ""} |`,
    ),
    "",
  );
  if (results.wire) out.push(...wireSection(results));
  if (results.commands) out.push(...commandsSection(results.commands, !results.wire));
  if (results.latency.http)
    out.push(...latencySection("## 2. Uncontended latency (HTTP, @upstash/redis)", results.latency.http));
  if (results.contention.http)
    out.push(...contentionSection("## 3. Contention (HTTP, @upstash/redis)", results.contention.http, true));
  if (results.latency.tcp || results.contention.tcp)
    out.push("## 4. Over TCP (ioredis, same redis-server)", "");
  if (results.latency.tcp) out.push(...latencySection("### Uncontended", results.latency.tcp));
  if (results.contention.tcp)
    out.push(...contentionSection("### Contention", results.contention.tcp, !results.contention.http));
  if (results.size) out.push(...sizeSection(results));
  if (results.scale) out.push(...scaleSection(results));
  if (results.permits?.http || results.permits?.tcp) out.push(...permitsSection(results.permits));
  if (results.handover) {
    out.push(
      "## 8. Handover to a waiting process",
      "",
      "One holder, one waiter, with and without wake-ups: [handover.md](handover.md).",
      "",
    );
  }
  out.push(...howToRead());
  return `${out.join("\n")}\n`;
}

function ms(value: number | undefined): string {
  if (value === undefined || !Number.isFinite(value)) return "–";
  if (value < 10) return value.toFixed(2);
  if (value < 100) return value.toFixed(1);
  return value.toFixed(0);
}

function wireTable(config: WireConfigResult): string[] {
  const rows = WIRE_OPS.map((op) => {
    const ours = config.ours[op];
    const old = config.v021[op];
    const cold = config.oursCold?.[op];
    return `| ${op} | ${ours.requests} / ${ours.commands} | ${ours.bodyBytes} | ${old.requests} / ${old.commands} | ${old.bodyBytes} | ${Math.round((ours.bodyBytes / old.bodyBytes) * 100)} % | ${cold ? `${cold.requests} / ${cold.commands} / ${cold.bodyBytes} B` : "–"} |`;
  });
  return [
    `Auto-pipelining ${config.autoPipelining ? "**on** (the client's default: every call is a `POST /pipeline`)" : "off (`enableAutoPipelining: false`: `POST /`)"}:`,
    "",
    "| Operation | ours requests / commands | ours body B | 0.2.1 requests / commands | 0.2.1 body B | ours ÷ 0.2.1 body | ours after SCRIPT FLUSH: requests / commands / body |",
    "| --- | --: | --: | --: | --: | --: | --: |",
    ...rows,
    "",
  ];
}

function bodyElements(body: string): string {
  try {
    const parsed = JSON.parse(body) as unknown;
    const command = (Array.isArray(parsed) && Array.isArray(parsed[0]) ? parsed[0] : parsed) as unknown[];
    return command.map((element) => JSON.stringify(element).length).join(" + ");
  } catch {
    return "?";
  }
}

function wireSection(results: BenchResults): string[] {
  const wire = results.wire as NonNullable<BenchResults["wire"]>;
  const main = wire.configs.find((config) => config.autoPipelining);
  return [
    "## 1. Wire cost (HTTP, counted at a pass-through in front of the endpoint)",
    "",
    `Same \`@upstash/redis\` client for both (\`enableTelemetry: false\`, defaults otherwise), ${wire.idLength}-character id, 36-character UUID tokens; mean of ${wire.repetitions} repetitions. "acquire, held" is one failed try on a key another lock holds. Commands are what Upstash bills: one per request on \`/\`, one per command of a \`/pipeline\` or \`/multi-exec\` body, one per subscription. "After SCRIPT FLUSH" is a client that has run the scripts before, on a server that lost them (a restart): the NOSCRIPT answer, then the script in full. Proxy counters (requests, bytes, commands + subscriptions) agree with the pass-through: ${wire.proxyAgrees === undefined ? "n/a (remote)" : wire.proxyAgrees ? "yes" : "**no**"}.${uncountedSuffix(wire.uncountedByRoute)}`,
    "",
    ...wire.configs.flatMap(wireTable),
    ...(wire.configs.some((config) => config.oursCold)
      ? []
      : [
          "After SCRIPT FLUSH: not measured, because the Redis behind the endpoint is not this run's own (the run never flushes a server it did not start).",
          "",
        ]),
    `acquire + extend + release body bytes: ours ${wire.cycle.ours} B, 0.2.1 ${wire.cycle.v021} B (${Math.round(wire.cycle.ratio * 100)} %). **Goal: no more request bytes than 0.2.1.** Upstash bills commands, not bytes: the commands table below is what costs money.`,
    "",
    ...(main
      ? [
          "Where ours' bytes go (JSON length of each element of the command: verb, SHA-1, key count, keys, arguments):",
          "",
          ...(["acquire", "extend", "release"] as const).map(
            (op) =>
              `- ${op}: ${main.ours[op].bodyBytes} B = ${bodyElements(main.ours[op].sampleBody)} (+ brackets and commas)`,
          ),
          "",
        ]
      : []),
  ];
}

/** A sentence on requests whose commands were not counted, or undefined if none were. */
function uncountedNote(uncounted: Readonly<Record<string, number>>): string | undefined {
  const entries = Object.entries(uncounted).filter(([, count]) => count > 0);
  if (entries.length === 0) return undefined;
  const list = entries.map(([route, count]) => `${count} on ${route}`).join(", ");
  return `Requests counted as 0 commands (route or body outside the billing rules): ${list}.`;
}

function uncountedSuffix(uncounted: Readonly<Record<string, number>> | undefined): string {
  const note = uncounted ? uncountedNote(uncounted) : undefined;
  return note ? ` **${note}**` : "";
}

function count(value: number): string {
  if (!Number.isFinite(value)) return "–";
  return Number.isInteger(value) ? String(value) : value.toFixed(2);
}

function costCells(cost: CommandCost): string {
  const flag = cost.unexpected > 0 ? ` (**${cost.unexpected} of ${cost.samples} not as expected**)` : "";
  return `${count(cost.requests)} | **${count(cost.commands)}** | ${Number.isFinite(cost.bodyBytes) ? Math.round(cost.bodyBytes) : "–"}${flag}`;
}

function commandsRow(row: CommandRow): string {
  const difference = row.ours.commands - row.v021.commands;
  const verdict = difference <= 0 ? `${count(difference)} ✓` : `+${count(difference)} **over**`;
  const routes = row.ours.routes.length > 0 ? row.ours.routes.join(", ") : "–";
  return `| ${row.operation} | ${costCells(row.ours)} | ${costCells(row.v021)} | ${verdict} | ${routes} |`;
}

function commandsSection(commands: CommandsResults, ownHeading: boolean): string[] {
  // Rows that share a scenario (the four uncontended operations) are described once.
  const scenarios = new Map<string, string[]>();
  for (const row of commands.rows)
    scenarios.set(row.scenario, [...(scenarios.get(row.scenario) ?? []), row.operation]);
  return [
    ownHeading ? "## 1. Billed commands per operation (HTTP)" : "### Billed commands per operation",
    "",
    "What Upstash would bill, ours against 0.2.1, each with its defaults (`new Lock({ id, redis })`, nothing else unless the row says so: the wake-up rows call `enableWakeUps(redis)` for ours, which 0.2.1 does not have), on the same `@upstash/redis` client configuration (auto-pipelining on, its default). Counted at a pass-through in front of the endpoint: requests, commands (one per command sent, one per subscription) and request body bytes, means over the samples. **Goal: ours at most 0.2.1's commands in every row.**",
    "",
    "| Operation | ours requests | ours commands | ours body B | 0.2.1 requests | 0.2.1 commands | 0.2.1 body B | commands, ours − 0.2.1 | ours' routes |",
    "| --- | --: | --: | --: | --: | --: | --: | --: | --- |",
    ...commands.rows.map(commandsRow),
    "",
    ...[...scenarios].map(([scenario, operations]) => `- **${operations.join("; ")}**: ${scenario}.`),
    "",
    `Proxy counters (requests, commands + subscriptions) agree with the pass-throughs, holders' included: ${commands.proxyAgrees === undefined ? "n/a (remote)" : commands.proxyAgrees ? "yes" : "**no**"}.${uncountedSuffix(commands.uncountedByRoute)}`,
    "",
  ];
}

function latencySection(title: string, latency: LatencyResults): string[] {
  return [
    title,
    "",
    `${latency.rounds} rounds × ${latency.iterationsPerRound} acquire + release cycles per variant, variants interleaved; one process, one client. Round trip (PING through the same client): p50 ${ms(latency.rttP50)} ms, p99 ${ms(latency.rttP99)} ms. CPU is \`process.cpuUsage()\` of the client process per cycle (median over rounds).`,
    "",
    "| Variant | acquire + release p50 ms | p99 ms | acquire p50 ms | release p50 ms | CPU per cycle µs | CPU vs raw client (ours' commands), paired by round | failures |",
    "| --- | --: | --: | --: | --: | --: | --: | --: |",
    ...latency.variants.map(
      (entry) =>
        `| ${VARIANT_LABELS[entry.variant]} | ${ms(entry.cycle.p50)} | ${ms(entry.cycle.p99)} | ${ms(entry.acquire.p50)} | ${ms(entry.release.p50)} | ${(entry.cpuPerCycle * 1000).toFixed(0)} | ${entry.cpuVsRaw === undefined ? "–" : `${entry.cpuVsRaw >= 1 ? "+" : ""}${((entry.cpuVsRaw - 1) * 100).toFixed(1)} %`} | ${entry.failures} |`,
    ),
    "",
    cpuSpread(latency),
    "",
  ];
}

function contentionSection(title: string, contention: ContentionResults, chart: boolean): string[] {
  return [
    title,
    "",
    `K worker processes loop acquire (waiting as long as needed) → ${contention.workMs} ms of work (a timer) → release for ${contention.durationMs / 1000} s per point; medians over rounds where K was repeated, the variants' order rotated from round to round${contention.warmUpMs > 0 ? `, after a discarded ${contention.warmUpMs / 1000} s warm-up point per variant at the largest K (the first point after the workers start runs slower)` : ""}. Every variant of ours acquires with \`retry: { attempts: ${WAIT_ATTEMPTS.toLocaleString("en")} }\` and the default lease (10 s). "ours, defaults" is \`new Lock({ id, redis })\` and nothing else: it polls every 100 ms (\`retry.delay\`). "ours, wake-ups" is the same Lock on a client for which \`enableWakeUps(redis)\` was called: a wait on a lock one holder keeps across several polls subscribes to its releases (the subscription counting as an attempt) and retries when one is announced. "ours, fair" is \`new FairLock({ id, redis })\` on that client: waiters queue in Redis in arrival order, only the first in line may take a freed lock, and each waiter subscribes after its first failed try and is woken by the announcement of its own turn. Wake-ups belong to a client, so the polling variants run on clients that never had them enabled. ${measuresText(contention)}`,
    "",
    ...(chart ? ["![contention chart](contention.svg)", ""] : []),
    ...contentionTable(contention),
  ];
}

/** What the contention and permits tables measure, and how requests are counted. */
function measuresText(contention: ContentionResults): string {
  const tcp = contention.transport === "tcp";
  return `Handover = next holder's acquire resolved − previous holder's release() called, on one machine clock; "to a waiter" counts only handovers between different workers; "acquire wait" is acquire() called → resolved, what callers experience. Fairness is sections per worker in the window: the least and most served worker, and the least ÷ the mean per worker (1: even; median over rounds, the worst round after the slash). Requests per acquire count everything the clients sent (release and subscriptions included) ÷ critical sections; ${tcp ? "for TCP these are commands sent by the clients (round trips), next to the commands Redis executed (Lua's inner commands included, from INFO) and the connections opened" : "counted at `fetch` in each worker, with the commands Upstash would bill for them (each command of a pipeline, each subscription) and their body bytes, cross-checked with the proxy's counters (commands forwarded + subscriptions opened)"}.${tcp ? "" : uncountedSuffix(uncountedOf(contention))}`;
}

function contentionTable(contention: ContentionResults): string[] {
  const tcp = contention.transport === "tcp";
  return [
    `| K | Variant | sections/s | handover p50 / p99 ms | to a waiter p50 / p99 ms | acquire wait p50 / p99 ms | same worker again | fairness min–max | fairness min ÷ mean | requests / acquire | ${tcp ? "" : "commands / acquire | request B / acquire | "}of which wake-up path | ${tcp ? "Redis commands / acquire | connections / acquire" : "proxy requests / commands per acquire | wake-ups active"} | rounds |`,
    `| --: | --- | --: | --: | --: | --: | --: | --: | --: | --: | ${tcp ? "" : "--: | --: | "}--: | --: | ${tcp ? "--: |" : "--- |"} --: |`,
    ...[...contention.summary]
      .sort((a, b) => a.k - b.k)
      .map(
        (row) =>
          `| ${row.k} | ${row.label} | ${row.sectionsPerSecond.toFixed(1)} | ${ms(row.handoverP50)} / ${ms(row.handoverP99)} | ${ms(row.waiterHandoverP50)} / ${ms(row.waiterHandoverP99)} | ${ms(row.acquireWaitP50)} / ${ms(row.acquireWaitP99)} | ${Math.round(row.sameWorkerShare * 100)} % | ${row.fairnessMin}–${row.fairnessMax} | ${row.fairnessRatio.toFixed(2)}${row.rounds > 1 ? ` / ${row.fairnessRatioWorst.toFixed(2)}` : ""} | ${row.requestsPerAcquire.toFixed(2)} | ${tcp ? "" : `${row.commandsPerAcquire?.toFixed(2) ?? "–"} | ${row.requestBytesPerAcquire?.toFixed(0) ?? "–"} | `}${row.wakeUpRequestsPerAcquire.toFixed(2)} | ${tcp ? `${row.serverCommandsPerAcquire?.toFixed(2) ?? "–"} | ${row.connectionsPerAcquire?.toFixed(3) ?? "–"}` : `${row.proxyRequestsPerAcquire?.toFixed(2) ?? "–"} / ${row.proxyCommandsPerAcquire?.toFixed(2) ?? "–"} | ${row.wakeUpsActive === undefined ? "–" : row.wakeUpsActive ? "yes" : "**no** (polled)"}`} | ${row.rounds} |`,
      ),
    "",
    ...overlapsLine(contention),
  ];
}

function permitsSection(permits: NonNullable<BenchResults["permits"]>): string[] {
  const runs = [permits.http, permits.tcp].filter((run): run is ContentionResults => run !== undefined);
  const first = runs[0] as ContentionResults;
  return [
    `## 7. Permits: semaphores, limit ${SEMAPHORE_LIMIT}`,
    "",
    `The contention loop of sections 3 and 4 on a semaphore: K worker processes loop acquire → ${first.workMs} ms of work → release for ${first.durationMs / 1000} s per point, up to ${SEMAPHORE_LIMIT} holding at once. "ours Semaphore" is \`new Semaphore({ id, redis, limit: ${SEMAPHORE_LIMIT}, lease: 10_000 })\` on a client for which \`enableWakeUps(redis)\` was called, each acquisition a \`Lease\` (\`const lease = await semaphore.acquire(...)\`, \`lease.release()\`), acquiring with \`retry: { attempts: ${WAIT_ATTEMPTS.toLocaleString("en")} }\`; "fair" adds \`fair: true\`. redis-semaphore's \`Semaphore\` (a sorted set of holders, ZCARD against the limit, retry every 10 ms, its default) speaks ioredis's \`eval\` only, so it runs over TCP alone; 5.x has no \`FairSemaphore\` any more (its README: removed, the plain \`Semaphore\` being as fair). With ${SEMAPHORE_LIMIT} permits, the n-th acquisition takes the place of the (n − ${SEMAPHORE_LIMIT})-th release in time order: handover is the time between them, and a section that began before that release was called would mean ${SEMAPHORE_LIMIT + 1} holders at once (the mutual exclusion check).`,
    "",
    ...runs.flatMap((run) => [
      `### ${run.transport === "http" ? "HTTP (@upstash/redis)" : "TCP (ioredis)"}`,
      "",
      measuresText(run),
      "",
      ...contentionTable(run),
    ]),
  ];
}

function uncountedOf(contention: ContentionResults): Record<string, number> {
  const total: Record<string, number> = {};
  for (const point of contention.points) {
    for (const [route, requests] of Object.entries(point.uncountedByRoute ?? {})) {
      total[route] = (total[route] ?? 0) + requests;
    }
  }
  return total;
}

function overlapsLine(contention: ContentionResults): string[] {
  const overlaps = contention.summary.reduce((total, row) => total + row.overlaps, 0);
  const failures = contention.summary.reduce((total, row) => total + row.failures, 0);
  const freed =
    contention.permits === 1
      ? "the previous holder called release"
      : `the release whose permit it took was called (which would mean ${contention.permits + 1} holders at once)`;
  return [
    `Mutual exclusion check: ${overlaps === 0 ? "no" : `**${overlaps}**`} section started before ${freed}; ${failures === 0 ? "no" : `**${failures}**`} failed acquisitions.`,
    "",
  ];
}

function sizeSection(results: BenchResults): string[] {
  const size = results.size as NonNullable<BenchResults["size"]>;
  return [
    "## 5. Size",
    "",
    `What each import costs a bundle: esbuild ${size.esbuild}, \`--bundle --minify --format=esm --platform=neutral\`, nothing external (neither package has runtime dependencies), the import tree-shaken from \`dist/index.js\` (\`sideEffects: false\`); gzip level 9, brotli quality 11. ${size.note}. The row from src/ bundles the same import from the source modules, where \`sideEffects: false\` lets esbuild drop whole unused files: the gap is what the one-file \`dist/index.js\` costs, whose top-level calls (each script's \`defineScript\`, the fair lock's store) must stay. **Goal: \`import { Lock }\` at most ${LOCK_GZIP_BUDGET.toLocaleString("en")} B gzip.**`,
    "",
    "| Bundle | minified B | gzip B | brotli B |",
    "| --- | --: | --: | --: |",
    ...size.entries.map(
      (entry) => `| ${entry.name} | ${entry.minifiedBytes} | ${entry.gzipBytes} | ${entry.brotliBytes} |`,
    ),
    "",
    `Ours (all exports) is ${size.gzipRatio}× 0.2.1 gzipped.`,
    "",
  ];
}

function scaleSection(results: BenchResults): string[] {
  const scale = results.scale as NonNullable<BenchResults["scale"]>;
  const first = scale.results[0];
  if (!first) return [];
  return [
    "## 6. Scale: one process holding many locks with auto-extend",
    "",
    `${first.count.toLocaleString("en")} locks held at once in one process over ioredis (a cheap transport, so the library's timers and bookkeeping are what is stressed), lease ${first.leaseMs} ms renewed every ${first.intervalMs} ms, measured over ${first.windowMs / 1000} s after one settling interval; each variant in a fresh process with \`--expose-gc\`. Memory is heapUsed growth after GC ÷ locks, the lock objects included.`,
    "",
    "| Variant | acquire all ms | renewals/s (expected) | event-loop delay p50 / p99 / max ms | CPU (share of a core) | heap per lock B | RSS per lock B | lost | release all ms | renewals after release | heap left per lock after release B |",
    "| --- | --: | --: | --: | --: | --: | --: | --: | --: | --: | --: |",
    ...scale.results.map(
      (row) =>
        `| ${row.variant === "ours" ? "ours (autoExtend)" : "redis-semaphore Mutex (refreshInterval)"} | ${row.acquireAllMs} | ${row.renewalsPerSecond} (${row.expectedRenewalsPerSecond}) | ${ms(row.eventLoopDelayMs.p50)} / ${ms(row.eventLoopDelayMs.p99)} / ${ms(row.eventLoopDelayMs.max)} | ${row.cpuShareOfOneCore.toFixed(2)} | ${row.heapPerLockBytes} | ${row.rssPerLockBytes} | ${row.lostDuringWindow} | ${row.releaseAllMs} | ${row.renewalsAfterRelease} | ${row.heapAfterReleasePerLockBytes} |`,
    ),
    "",
  ];
}

function howToRead(): string[] {
  return [
    "## How to read this",
    "",
    "- Every section runs its variants side by side in one run, interleaved, so ratios hold on a noisy machine; absolute numbers depend on the machine and its load (see the load average above).",
    "- Client work runs in child processes; the local proxy and redis-server run in the orchestrator's process and in their own, on the same cores, so at K = 16 the machine itself is saturated.",
    '- A polling waiter that is asleep lets the releasing worker take the lock straight back ("same worker again"): that keeps all-handover medians low but starves the others (see fairness). The handover to a waiter is what waking waiters changes.',
    "- A fair lock never lets the releasing worker take the lock straight back while others wait: every handover goes to another process, which must learn of its turn (a pub/sub announcement; over HTTP a server-sent event through the proxy) and be scheduled on the busy cores, where an unfair lock's releasing worker, already running, usually takes it straight back.",
    "- Reproduce with `npm run bench` (or `npx tsx bench/run.ts` after `npm run build`; `npm run bench -- --quick` for a smoke run, written to `.tmp/bench-quick/`). Set `UPSTASH_REDIS_REST_URL`/`UPSTASH_REDIS_REST_TOKEN` to measure HTTP against a real endpoint and `REDIS_URL` for the TCP sections.",
    "",
  ];
}

function cpuSpread(latency: LatencyResults): string {
  const ratios = latency.cpuRatioByRound;
  if (ratios.length === 0) return "";
  const [low, high] = interquartile(ratios);
  return `Ours ÷ raw CPU per round: median ${median(ratios).toFixed(3)}, middle half ${low.toFixed(2)}–${high.toFixed(2)}, extremes ${Math.min(...ratios).toFixed(2)}–${Math.max(...ratios).toFixed(2)} over ${ratios.length} rounds.`;
}
