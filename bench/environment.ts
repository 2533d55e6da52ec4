import { readFileSync } from "node:fs";
import os from "node:os";
import type { Redis as IORedis } from "ioredis";
import { type LocalStack, startLocalStack } from "../stack/local-stack";
import type { ProxyStats } from "../stack/proxy/stats";
import { type Endpoints, ioredisClient } from "./clients";
import { redisVersion } from "./redis-info";

/** Where the run sends its traffic, and what it may do there. */
export interface BenchEnvironment {
  readonly endpoints: Endpoints;
  /** "local proxy" or "UPSTASH_REDIS_REST_URL". */
  readonly httpTarget: string;
  /** "local redis-server", "REDIS_URL", or undefined when TCP sections are skipped. */
  readonly tcpTarget: string | undefined;
  /** Live counters of the local proxy (absent for a remote endpoint). */
  readonly proxyStats: Readonly<ProxyStats> | undefined;
  /**
   * A connection to the Redis behind the HTTP endpoint, when it is this run's own redis-server:
   * only then may the run SCRIPT FLUSH it.
   */
  readonly privateRedis: IORedis | undefined;
  /** A connection to the TCP sections' Redis, for INFO counters. */
  readonly tcpAdmin: IORedis | undefined;
  readonly redisVersion: string;
  readonly notes: readonly string[];
  stop(): Promise<void>;
}

/**
 * Starts the local stack (redis-server on a free port, never 6379, plus the Upstash REST proxy)
 * unless UPSTASH_REDIS_REST_URL and UPSTASH_REDIS_REST_TOKEN are set. TCP sections use REDIS_URL when
 * set, otherwise the local redis-server; with a remote HTTP endpoint and no REDIS_URL they are skipped.
 */
export async function prepareEnvironment(): Promise<BenchEnvironment> {
  const notes: string[] = [];
  const remoteUrl = process.env.UPSTASH_REDIS_REST_URL;
  const remoteToken = process.env.UPSTASH_REDIS_REST_TOKEN;
  const remote = Boolean(remoteUrl && remoteToken);
  let stack: LocalStack | undefined;
  // The proxy accepts Upstash's key-locking flag without its Lua key check, which would slow every
  // flagged script by a cost Upstash does not have (see stack/README.md); the tests check the keys.
  if (!remote) stack = await startLocalStack({ scriptFlags: "accept" });
  const http = remote
    ? { url: remoteUrl as string, token: remoteToken as string }
    : { url: (stack as LocalStack).url, token: (stack as LocalStack).token };
  const redisUrl = process.env.REDIS_URL ?? stack?.redisUrl;
  if (remote)
    notes.push("HTTP sections ran against UPSTASH_REDIS_REST_URL (counted at a local pass-through).");
  else
    notes.push(
      "The local proxy ran with --script-flags accept: key-locked scripts without the Lua key check.",
    );
  if (process.env.REDIS_URL) {
    notes.push("TCP sections ran against REDIS_URL: server counters include any other traffic on it.");
  }
  const privateRedis = stack?.redis ? ioredisClient(stack.redisUrl) : undefined;
  const tcpAdmin = redisUrl === undefined ? undefined : ioredisClient(redisUrl);
  const version = tcpAdmin ? await redisVersion(tcpAdmin) : "unknown (remote, no REDIS_URL)";
  return {
    endpoints: { http, ...(redisUrl === undefined ? {} : { redisUrl }) },
    httpTarget: remote ? "UPSTASH_REDIS_REST_URL" : "local proxy",
    tcpTarget:
      redisUrl === undefined ? undefined : process.env.REDIS_URL ? "REDIS_URL" : "local redis-server",
    proxyStats: stack?.proxy.stats,
    privateRedis,
    tcpAdmin,
    redisVersion: version,
    notes,
    async stop() {
      privateRedis?.disconnect();
      tcpAdmin?.disconnect();
      await stack?.stop();
    },
  };
}

/** The machine and software the numbers were measured on. */
export interface MachineInfo {
  readonly cpu: string;
  readonly cores: number;
  readonly memoryGiB: number;
  readonly os: string;
  readonly node: string;
  readonly redis: string;
  readonly upstashRedisClient: string;
  readonly ioredis: string;
  readonly loadAverageAtStart: readonly number[];
}

export function machineInfo(redis: string): MachineInfo {
  const cpus = os.cpus();
  return {
    cpu: cpus[0]?.model.trim() ?? "unknown",
    cores: cpus.length,
    memoryGiB: Math.round((os.totalmem() / 2 ** 30) * 10) / 10,
    os: `${os.type()} ${os.release()} ${os.arch()}`,
    node: process.version,
    redis,
    upstashRedisClient: packageVersion("@upstash/redis"),
    ioredis: packageVersion("ioredis"),
    loadAverageAtStart: os.loadavg().map((load) => Math.round(load * 100) / 100),
  };
}

export function packageVersion(name: string): string {
  const file = new URL(`../node_modules/${name}/package.json`, import.meta.url);
  return (JSON.parse(readFileSync(file, "utf8")) as { version: string }).version.replace(/^v/, "");
}
