// In a worker: the clients. The lock's own client on each member (@upstash/redis across the
// worker's wire, or ioredis straight to redis-server), and a separate raw connection per member
// for the ownership probes, which never goes through the lock or the faults.

import { Redis as Upstash } from "@upstash/redis";
import { Redis as IoRedis } from "ioredis";
import { type EvalClient, enableWakeUps, type QuorumSpec, quorum, type RedisClient } from "../../src/index";
import type { ChaosWorkerConfig, MemberEndpoint } from "./protocol";

export interface Wiring {
  /** The lock's `redis`: one client, or a quorum of one per member. */
  readonly redis: RedisClient | QuorumSpec;
  /** A real @upstash/redis client on member 0 across the wire, for a 0.2.1 lock. */
  readonly upstash: Upstash;
  /** One raw connection per member, for the ownership probes. */
  readonly probes: readonly IoRedis[];
  /** Closes every connection, so that the worker can exit by itself. */
  close(): Promise<void>;
}

function upstashClient(member: MemberEndpoint): Upstash {
  // Retries like a real client would (a little), so that dropped replies re-run scripts.
  return new Upstash({
    url: member.restUrl,
    token: member.token,
    enableTelemetry: false,
    retry: { retries: 2, backoff: (retryCount) => 20 * 2 ** retryCount },
  });
}

/**
 * The lock's view of an @upstash/redis client: its scripts cross the wire, while its wake-up
 * subscriptions (server-sent events, opened on `client.baseUrl`) go straight to the proxy, since
 * a pass-through buffers whole replies and a stream would never get through it.
 */
function upstashLockClient(member: MemberEndpoint): EvalClient {
  const http = upstashClient(member);
  const client: EvalClient & { client: { baseUrl: string; headers: Record<string, string> } } = {
    eval: (script: string, keys: string[], args: (string | number)[]) => http.eval(script, keys, args),
    evalsha: (sha1: string, keys: string[], args: (string | number)[]) => http.evalsha(sha1, keys, args),
    client: { baseUrl: member.proxyUrl, headers: { authorization: `Bearer ${member.token}` } },
  };
  return client;
}

function tcpClient(member: MemberEndpoint): IoRedis {
  const client = new IoRedis(member.redisPort, "127.0.0.1");
  // A member frozen or a connection killed makes ioredis emit errors; it reconnects by itself.
  client.on("error", () => {});
  return client;
}

/** Connects a worker to its scenario's members; every lock client gets wake-ups. */
export function wire(config: ChaosWorkerConfig): Wiring {
  const { scenario, members } = config;
  const tcp: IoRedis[] = [];
  const lockClients = members.map((member): RedisClient => {
    if (scenario.client === "upstash") return upstashLockClient(member);
    const client = tcpClient(member);
    tcp.push(client);
    return client;
  });
  const redis = lockClients.length > 1 ? quorum(lockClients) : (lockClients[0] as RedisClient);
  if (config.library === "current") enableWakeUps(redis);
  const probes = members.map(tcpClient);
  return {
    redis,
    upstash: upstashClient(members[0] as MemberEndpoint),
    probes,
    close: async () => {
      await Promise.all([...tcp, ...probes].map((client) => client.quit().catch(() => client.disconnect())));
    },
  };
}
