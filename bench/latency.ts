import { runChild } from "./children";
import type { Endpoints } from "./clients";
import type { BenchEnvironment } from "./environment";
import type { LatencyWorkerConfig, LatencyWorkerResult, VariantLatency } from "./latency-worker";
import { median, round } from "./stats";
import type { Transport, VariantId } from "./variants";

/** Uncontended results of one transport, as reported. */
export interface LatencyResults {
  readonly transport: Transport;
  readonly rounds: number;
  readonly iterationsPerRound: number;
  /** Median latency of PING through the same client: one round trip. */
  readonly rttP50: number;
  readonly rttP99: number;
  readonly variants: (VariantLatency & {
    /** Median over rounds of CPU ms per cycle. */
    readonly cpuPerCycle: number;
    /** Median over rounds of this variant's CPU ÷ the raw client's in the same round. */
    readonly cpuVsRaw: number | undefined;
  })[];
  /** CPU per cycle of ours relative to the raw client sending the same commands (1.05 = 5 % more). */
  readonly cpuRatioOursToRaw: number | undefined;
  /** The same ratio, round by round (ours and raw ran back to back in each round). */
  readonly cpuRatioByRound: number[];
}

export const HTTP_LATENCY_VARIANTS: VariantId[] = ["ours", "v021", "raw-ours", "raw-v021"];
export const TCP_LATENCY_VARIANTS: VariantId[] = ["ours", "redlock", "semaphore", "raw-ours"];

/** Sections 2 and 4 (uncontended): runs the latency worker for one transport. */
export async function measureLatency(
  env: BenchEnvironment,
  transport: Transport,
  keyBase: string,
  shape: { rounds: number; iterations: number; warmup: number },
): Promise<LatencyResults> {
  const variants = transport === "http" ? HTTP_LATENCY_VARIANTS : TCP_LATENCY_VARIANTS;
  const config: LatencyWorkerConfig = {
    endpoints: onlyFor(transport, env.endpoints),
    transport,
    variants,
    keyBase,
    ...shape,
  };
  const result = await runChild<LatencyWorkerResult>("./latency-worker.ts", config, { timeoutMs: 600_000 });
  const byVariant = new Map(result.variants.map((entry) => [entry.variant, entry]));
  const ours = byVariant.get("ours");
  // Ratios are paired by round: each variant's batch ran next to the raw client's.
  const raw = byVariant.get("raw-ours");
  const perRound = (entry: VariantLatency) =>
    raw ? entry.cpuPerCycleByRound.map((cpu, index) => cpu / (raw.cpuPerCycleByRound[index] as number)) : [];
  const ratios = ours ? perRound(ours) : [];
  return {
    transport,
    rounds: shape.rounds,
    iterationsPerRound: shape.iterations,
    rttP50: round(result.rtt.p50),
    rttP99: round(result.rtt.p99),
    variants: result.variants.map((entry) => ({
      ...entry,
      cpuPerCycle: round(median(entry.cpuPerCycleByRound), 4),
      cpuVsRaw: raw ? round(median(perRound(entry)), 4) : undefined,
    })),
    cpuRatioOursToRaw: ratios.length > 0 ? round(median(ratios), 4) : undefined,
    cpuRatioByRound: ratios.map((ratio) => round(ratio, 4)),
  };
}

/** The endpoint of one transport alone, so the worker opens no other connection. */
function onlyFor(transport: Transport, endpoints: Endpoints): Endpoints {
  const { http, redisUrl } = endpoints;
  if (transport === "http") return http ? { http } : {};
  return redisUrl ? { redisUrl } : {};
}
