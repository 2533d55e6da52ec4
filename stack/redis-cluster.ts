import { execFile } from "node:child_process";
import { rmSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { findFreePort } from "./free-port";
import { type RedisServerHandle, startRedisServer } from "./redis-server";
import { RespConnection } from "./resp/connection";

/** Options of {@link startRedisCluster}. */
export interface RedisClusterOptions {
  /**
   * How many masters to start; `redis-cli --cluster create` refuses fewer than 3.
   * @default 3
   */
  readonly masters?: number;
  /**
   * How long to wait, once the nodes run, for every node to report `cluster_state:ok`, in milliseconds.
   * @default 20000
   */
  readonly readyTimeoutMs?: number;
}

/** Where one master listens. */
export interface RedisClusterNode {
  readonly host: string;
  readonly port: number;
}

/** A cluster started by {@link startRedisCluster}. */
export interface RedisClusterHandle {
  /** The masters, each owning a third (with 3 masters) of the 16,384 slots. */
  readonly nodes: readonly RedisClusterNode[];
  /** `redis://127.0.0.1:<port>` of each master, in the order of `nodes`. */
  readonly urls: readonly string[];
  /** Stops every node and removes the temporary directories. Safe to call twice. */
  stop(): Promise<void>;
}

const HOST = "127.0.0.1";
/** A cluster bus port taken between picking it and binding it is retried with another, this many times. */
const BUS_PORT_ATTEMPTS = 5;
const PROBE_INTERVAL_MS = 50;
const CREATE_TIMEOUT_MS = 30_000;

/** Directories of the clusters still running, removed if the process exits without stop(). */
const liveDirs = new Set<readonly string[]>();
let exitHookInstalled = false;

function removeOnExit(dirs: readonly string[]): void {
  if (!exitHookInstalled) {
    exitHookInstalled = true;
    // Runs after child-process.ts's hook (installed by the first node started), which kills the nodes.
    process.on("exit", () => {
      for (const group of liveDirs) {
        for (const dir of group) rmSync(dir, { recursive: true, force: true });
      }
    });
  }
  liveDirs.add(dirs);
}

/**
 * Starts a Redis Cluster of `masters` masters and no replicas on free ports of 127.0.0.1 (never 6379),
 * without persistence, and resolves once every node reports `cluster_state:ok`. Each node is a
 * `redis-server --cluster-enabled yes` from {@link startRedisServer}; `redis-cli --cluster create` assigns
 * the slots. The nodes are killed when this process exits.
 *
 * Each node's cluster bus gets its own free port (`--cluster-port`): the default, port + 10000, can be taken
 * or out of range for a high port.
 *
 * @throws Error with the output of redis-server or redis-cli when the cluster cannot be formed in time.
 */
export async function startRedisCluster(options: RedisClusterOptions = {}): Promise<RedisClusterHandle> {
  const masters = options.masters ?? 3;
  if (!Number.isInteger(masters) || masters < 3) {
    throw new RangeError(`Expected \`masters\` to be an integer of at least 3, got ${masters}`);
  }
  const configDir = await mkdtemp(join(tmpdir(), "local-upstash-cluster-"));
  const servers: RedisServerHandle[] = [];
  const stopAll = async () => {
    await Promise.all(servers.map((server) => server.stop()));
    await rm(configDir, { recursive: true, force: true });
  };
  try {
    for (let index = 1; index <= masters; index += 1) {
      servers.push(await startNode(join(configDir, `nodes-${index}.conf`)));
    }
    const nodes = servers.map((server) => ({ host: HOST, port: server.port }));
    await createCluster(nodes);
    await waitUntilClusterOk(nodes, options.readyTimeoutMs ?? 20_000);
  } catch (error) {
    await stopAll();
    throw error;
  }
  const dirs = [configDir, ...servers.map((server) => server.dir)];
  removeOnExit(dirs);
  let stopping: Promise<void> | undefined;
  return {
    nodes: servers.map((server) => ({ host: HOST, port: server.port })),
    urls: servers.map((server) => server.url),
    stop: () => {
      stopping ??= stopAll().finally(() => liveDirs.delete(dirs));
      return stopping;
    },
  };
}

async function startNode(configFile: string): Promise<RedisServerHandle> {
  for (let attempt = 1; ; attempt += 1) {
    const busPort = await findFreePort(HOST);
    try {
      return await startRedisServer({
        extraArgs: [
          ...["--cluster-enabled", "yes", "--cluster-config-file", configFile],
          ...["--cluster-port", String(busPort)],
        ],
      });
    } catch (error) {
      if (attempt >= BUS_PORT_ATTEMPTS) throw error;
    }
  }
}

function createCluster(nodes: readonly RedisClusterNode[]): Promise<void> {
  const addresses = nodes.map((node) => `${node.host}:${node.port}`);
  const args = ["--cluster", "create", ...addresses, "--cluster-replicas", "0", "--cluster-yes"];
  return new Promise((resolve, reject) => {
    execFile("redis-cli", args, { timeout: CREATE_TIMEOUT_MS }, (error, stdout, stderr) => {
      if (error) {
        reject(new Error(`redis-cli --cluster create failed (${error.message}): ${stdout}${stderr}`.trim()));
      } else {
        resolve();
      }
    });
  });
}

/** Polls every node until it sees all slots served and knows every other node. */
async function waitUntilClusterOk(nodes: readonly RedisClusterNode[], timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  const connections = nodes.map((node) => new RespConnection({ host: node.host, port: node.port }));
  try {
    for (;;) {
      const infos = await Promise.all(connections.map((connection) => clusterInfo(connection)));
      const pending = infos.filter(
        (info) =>
          !info.includes("cluster_state:ok\r\n") || !info.includes(`cluster_known_nodes:${nodes.length}\r\n`),
      );
      if (pending.length === 0) return;
      if (Date.now() > deadline) {
        throw new Error(
          `Redis Cluster not ready within ${timeoutMs} ms; ${pending.length} node(s) not ok:\n${pending.join("\n")}`,
        );
      }
      await new Promise((resolve) => setTimeout(resolve, PROBE_INTERVAL_MS));
    }
  } finally {
    for (const connection of connections) connection.close();
  }
}

async function clusterInfo(connection: RespConnection): Promise<string> {
  try {
    return String(await connection.call("CLUSTER", "INFO"));
  } catch (error) {
    return `(${connection.label}: ${error instanceof Error ? error.message : String(error)})`;
  }
}
