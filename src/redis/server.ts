import { clientKind } from "./client";

/**
 * As far as the lock cares: Upstash persists its data and runs scripts under a global database lock
 * unless they carry the `allow-key-locking` flag, which others (Redis, Valkey, Dragonfly, clusters) refuse.
 */
export type ServerKind = "upstash" | "redis";

/**
 * "upstash" for `@upstash/redis` (alone with `createScript`) or ioredis/node-redis on a `*.upstash.io` host,
 * else "redis". A default only: the `server` option overrides it; a server refusing the flag is remembered.
 */
export function guessServerKind(client: unknown): ServerKind {
  const kind = clientKind(client);
  if (kind === "eval") {
    return typeof (client as { createScript?: unknown }).createScript === "function" ? "upstash" : "redis";
  }
  const { options, startupNodes } = (client ?? {}) as {
    options?: { host?: unknown; url?: unknown; socket?: { host?: unknown } };
    startupNodes?: unknown;
  };
  const nodes = Array.isArray(startupNodes) ? startupNodes : [];
  // ioredis: `options.host`, a Cluster's `startupNodes`; node-redis: `options.url` or `options.socket.host`.
  const hosts = [
    options?.host,
    options?.socket?.host,
    hostOf(options?.url),
    ...nodes.map((node) => node?.host ?? node),
  ];
  return hosts.some((host) => typeof host === "string" && /(^|\.)upstash\.io$/i.test(host))
    ? "upstash"
    : "redis";
}

function hostOf(url: unknown): string | undefined {
  try {
    return typeof url === "string" ? new URL(url).hostname : undefined;
  } catch {
    return undefined;
  }
}
