import { detectClient } from "./detect";

/**
 * The kind of server a client talks to, as far as it matters to the lock: Upstash runs scripts
 * under its global database lock unless they carry the `allow-key-locking` flag, and persists its
 * data; any other Redis (Redis, Valkey, Dragonfly, a cluster) refuses that flag.
 */
export type ServerKind = "upstash" | "redis";

const UPSTASH_HOST = /(^|\.)upstash\.io$/i;

/**
 * What `client` most likely talks to: "upstash" for `@upstash/redis` (recognised by its
 * `createScript`, which no other eval client has) and for an ioredis or node-redis client whose
 * configured host is an Upstash endpoint (`*.upstash.io`); "redis" otherwise. A guess only sets a
 * default: the `server` option overrides it, and a server that refuses the flag is remembered.
 */
export function guessServerKind(client: unknown): ServerKind {
  const detected = detectClient(client);
  if (detected === undefined) return "redis";
  switch (detected.kind) {
    case "eval":
      return typeof (client as { createScript?: unknown }).createScript === "function" ? "upstash" : "redis";
    case "ioredis":
      return ioredisHosts(client).some(isUpstashHost) ? "upstash" : "redis";
    case "node-redis":
      return nodeRedisHosts(client).some(isUpstashHost) ? "upstash" : "redis";
  }
}

function isUpstashHost(host: unknown): boolean {
  return typeof host === "string" && UPSTASH_HOST.test(host);
}

/** ioredis keeps its resolved options on `options` (Redis) and its seed nodes on `startupNodes` (Cluster). */
function ioredisHosts(client: unknown): unknown[] {
  const { options, startupNodes } = client as {
    options?: { host?: unknown };
    startupNodes?: unknown;
  };
  const nodes = Array.isArray(startupNodes) ? startupNodes : [];
  return [options?.host, ...nodes.map((node) => (typeof node === "object" && node ? node.host : node))];
}

/** node-redis exposes the options it was created with: a `url`, or `socket.host`. */
function nodeRedisHosts(client: unknown): unknown[] {
  const options = (client as { options?: { url?: unknown; socket?: { host?: unknown } } }).options;
  return [hostOfUrl(options?.url), options?.socket?.host];
}

function hostOfUrl(url: unknown): string | undefined {
  if (typeof url !== "string") return undefined;
  try {
    return new URL(url).hostname;
  } catch {
    return undefined;
  }
}
