import { Redis as UpstashRedis } from "@upstash/redis";
import { Redis as IORedis } from "ioredis";
import { enableWakeUps } from "../dist/index.js";

/** Where the benchmark's clients connect. */
export interface Endpoints {
  /** Upstash REST endpoint (the local proxy, or UPSTASH_REDIS_REST_URL). */
  readonly http?: { readonly url: string; readonly token: string };
  /** Redis over TCP for ioredis (the local redis-server, or REDIS_URL). */
  readonly redisUrl?: string;
}

/**
 * The one `@upstash/redis` configuration every HTTP variant shares: the client's defaults
 * (auto-pipelining on, 5 retries, read-your-writes) with telemetry off.
 */
export function upstashClient(
  http: NonNullable<Endpoints["http"]>,
  options: { autoPipelining?: boolean } = {},
): UpstashRedis {
  return new UpstashRedis({
    url: http.url,
    token: http.token,
    enableTelemetry: false,
    ...(options.autoPipelining === undefined ? {} : { enableAutoPipelining: options.autoPipelining }),
  });
}

/** An ioredis client with its defaults (ioredis 6 speaks RESP3). */
export function ioredisClient(redisUrl: string): IORedis {
  return new IORedis(redisUrl);
}

/** One client per transport. */
export interface ClientPair {
  readonly upstash?: UpstashRedis;
  readonly ioredis?: IORedis;
}

/**
 * The clients of one process: plain ones, and a second pair on which `enableWakeUps` was called.
 * Wake-ups belong to a client, for every lock on it (a `FairLock` even enables them on an
 * `@upstash/redis` client by itself), so the variants that poll keep clients that never had them.
 */
export interface Clients extends ClientPair {
  readonly wakeUps: ClientPair;
}

function pairFor(endpoints: Endpoints): ClientPair {
  return {
    ...(endpoints.http ? { upstash: upstashClient(endpoints.http) } : {}),
    ...(endpoints.redisUrl ? { ioredis: ioredisClient(endpoints.redisUrl) } : {}),
  };
}

export function createClients(endpoints: Endpoints): Clients {
  const wakeUps = pairFor(endpoints);
  for (const client of [wakeUps.upstash, wakeUps.ioredis]) if (client) enableWakeUps(client);
  return { ...pairFor(endpoints), wakeUps };
}

/** Connects every client (a round trip each), so that no measurement pays for it. */
export async function connectClients(clients: Clients): Promise<void> {
  for (const pair of [clients, clients.wakeUps]) {
    await pair.upstash?.ping();
    await pair.ioredis?.ping();
  }
}

export function closeClients(clients: Clients): void {
  clients.ioredis?.disconnect();
  clients.wakeUps.ioredis?.disconnect();
}
