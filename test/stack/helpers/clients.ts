import { Redis, type RedisConfigNodejs } from "@upstash/redis";

/** Where a client connects. */
export interface Endpoint {
  readonly url: string;
  readonly token: string;
}

/** A real @upstash/redis client with retries and telemetry off unless `overrides` say otherwise. */
export function createClient(endpoint: Endpoint, overrides: Partial<RedisConfigNodejs> = {}): Redis {
  return new Redis({
    url: endpoint.url,
    token: endpoint.token,
    retry: false,
    enableTelemetry: false,
    ...overrides,
  });
}

/** The client configurations every conformance test runs with. */
export const clientVariants: ReadonlyArray<{
  readonly name: string;
  readonly options: Partial<RedisConfigNodejs>;
}> = [
  { name: "auto-pipelining (default)", options: {} },
  { name: "enableAutoPipelining: false", options: { enableAutoPipelining: false } },
  { name: "responseEncoding: false", options: { responseEncoding: false } },
];
