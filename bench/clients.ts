import { Redis as UpstashRedis } from "@upstash/redis";
import { Redis as IORedis } from "ioredis";

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

/** The clients of one process. */
export interface Clients {
  readonly upstash?: UpstashRedis;
  readonly ioredis?: IORedis;
}

export function createClients(endpoints: Endpoints): Clients {
  return {
    ...(endpoints.http ? { upstash: upstashClient(endpoints.http) } : {}),
    ...(endpoints.redisUrl ? { ioredis: ioredisClient(endpoints.redisUrl) } : {}),
  };
}

export function closeClients(clients: Clients): void {
  clients.ioredis?.disconnect();
}
