// Child process of section 2 (and the uncontended part of section 4): acquire + release latency and
// CPU time per cycle for each variant, one variant at a time, interleaved round by round. It runs in
// its own process so that its CPU time holds only client-side work (the proxy lives in the parent).
import { childConfig, report, reportFailure } from "./children";
import { closeClients, createClients, type Endpoints } from "./clients";
import { cpuMs } from "./clock";
import { summarize } from "./stats";
import { type LockHandle, lockHandle, type Transport, type VariantId } from "./variants";

export interface LatencyWorkerConfig {
  readonly endpoints: Endpoints;
  readonly transport: Transport;
  readonly variants: readonly VariantId[];
  readonly keyBase: string;
  readonly rounds: number;
  readonly iterations: number;
  readonly warmup: number;
}

/** Results of one variant. */
export interface VariantLatency {
  readonly variant: VariantId;
  /** acquire + release, milliseconds. */
  readonly cycle: ReturnType<typeof summarize>;
  readonly acquire: ReturnType<typeof summarize>;
  readonly release: ReturnType<typeof summarize>;
  /** CPU milliseconds per acquire + release, one value per round. */
  readonly cpuPerCycleByRound: number[];
  /** Acquisitions that did not succeed (should be 0: nothing else holds the key). */
  readonly failures: number;
}

export interface LatencyWorkerResult {
  readonly rtt: ReturnType<typeof summarize>;
  readonly cpuPerPingByRound: number[];
  readonly variants: VariantLatency[];
}

const config = childConfig<LatencyWorkerConfig>();

try {
  report({ type: "result", result: await measure(config) });
} catch (error) {
  reportFailure(error);
}

async function measure(config: LatencyWorkerConfig): Promise<LatencyWorkerResult> {
  const clients = createClients(config.endpoints);
  try {
    const ping =
      config.transport === "http"
        ? () => (clients.upstash as NonNullable<typeof clients.upstash>).ping()
        : () => (clients.ioredis as NonNullable<typeof clients.ioredis>).ping();
    const handles: {
      variant: VariantId;
      handle: LockHandle;
      samples: { cycle: number[]; acquire: number[]; release: number[] };
      cpu: number[];
      failures: number;
    }[] = [];
    for (const variant of config.variants) {
      handles.push({
        variant,
        handle: await lockHandle(variant, config.transport, clients, `${config.keyBase}:${variant}`, false),
        samples: { cycle: [] as number[], acquire: [] as number[], release: [] as number[] },
        cpu: [] as number[],
        failures: 0,
      });
    }
    const rtt: number[] = [];
    const pingCpu: number[] = [];
    for (let index = 0; index < config.warmup; index++) {
      await ping();
      for (const entry of handles) await cycle(entry.handle);
    }
    for (let round = 0; round < config.rounds; round++) {
      // Rotate the order every round so no variant always runs first (or right after another).
      const order = handles.map(
        (_, index) => handles[(index + round) % handles.length] as (typeof handles)[0],
      );
      for (const entry of order) {
        const cpuBefore = cpuMs();
        for (let index = 0; index < config.iterations; index++) {
          const [acquired, acquireMs, releaseMs] = await cycle(entry.handle);
          if (!acquired) entry.failures += 1;
          entry.samples.acquire.push(acquireMs);
          entry.samples.release.push(releaseMs);
          entry.samples.cycle.push(acquireMs + releaseMs);
        }
        entry.cpu.push((cpuMs() - cpuBefore) / config.iterations);
      }
      const cpuBefore = cpuMs();
      for (let index = 0; index < config.iterations; index++) {
        const started = performance.now();
        await ping();
        rtt.push(performance.now() - started);
      }
      pingCpu.push((cpuMs() - cpuBefore) / config.iterations);
    }
    return {
      rtt: summarize(rtt),
      cpuPerPingByRound: pingCpu,
      variants: handles.map((entry) => ({
        variant: entry.variant,
        cycle: summarize(entry.samples.cycle),
        acquire: summarize(entry.samples.acquire),
        release: summarize(entry.samples.release),
        cpuPerCycleByRound: entry.cpu,
        failures: entry.failures,
      })),
    };
  } finally {
    closeClients(clients);
  }
}

async function cycle(handle: LockHandle): Promise<[boolean, number, number]> {
  const started = performance.now();
  const acquired = await handle.acquire();
  const acquiredAt = performance.now();
  await handle.release();
  return [acquired, acquiredAt - started, performance.now() - acquiredAt];
}
