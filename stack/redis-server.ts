import { type ChildProcess, spawn } from "node:child_process";
import { mkdir, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { killOnExit, OutputTail, terminate } from "./child-process";
import { findFreePort } from "./free-port";
import type { Command } from "./resp/command";
import { RespConnection } from "./resp/connection";
import { RespStatus } from "./resp/reply";

/** Options of {@link startRedisServer}. */
export interface RedisServerOptions {
  /**
   * Arguments appended after the defaults; a later `--option` overrides an earlier one
   * (e.g. `["--appendonly", "yes"]` for persistence across `restart()`).
   * @default []
   */
  readonly extraArgs?: readonly string[];
  /**
   * The redis-server executable.
   * @default "redis-server"
   */
  readonly binary?: string;
  /**
   * How long to wait for the server to answer PING, in milliseconds.
   * @default 10000
   */
  readonly startTimeoutMs?: number;
}

/** A redis-server started by {@link startRedisServer}. */
export interface RedisServerHandle {
  readonly port: number;
  /** `redis://127.0.0.1:<port>` */
  readonly url: string;
  /** Working directory of the server (`--dir`), a fresh temporary directory; removed by `stop()`. */
  readonly dir: string;
  /** Stops the server (SIGTERM, SIGKILL after 5 s) and removes its directory. Safe to call twice. */
  stop(): Promise<void>;
  /** Stops the server if it runs, then starts it again on the same port with the same arguments and directory. */
  restart(): Promise<void>;
  /**
   * Freezes the process (SIGSTOP): its connections stay open and answer nothing, like a long GC pause,
   * a frozen VM or a black-holed network. `thaw()` (SIGCONT) resumes it; `stop()` and `restart()` thaw first.
   */
  freeze(): void;
  thaw(): void;
}

const HOST = "127.0.0.1";
/** A port taken between picking it and binding it is retried with another port, this many times. */
const PORT_ATTEMPTS = 5;
const PROBE_INTERVAL_MS = 20;

interface LaunchConfig {
  readonly binary: string;
  readonly dir: string;
  readonly extraArgs: readonly string[];
  readonly startTimeoutMs: number;
}

/** Why a launch failed, and whether another port may help. */
class LaunchError extends Error {
  override name = "LaunchError";

  constructor(
    message: string,
    readonly portTaken: boolean,
  ) {
    super(message);
  }
}

/**
 * Starts a throwaway redis-server on a free port (never 6379), without persistence, and resolves once it
 * answers PING. The process is killed when this process exits.
 *
 * `redis-server --port 0` does not listen at all, so a free port is found first and the server bound to it;
 * if another process takes the port in between, another one is tried.
 *
 * @throws Error with the server's output when it cannot start (binary missing, bad arguments, timeout).
 */
export async function startRedisServer(options: RedisServerOptions = {}): Promise<RedisServerHandle> {
  const config: LaunchConfig = {
    binary: options.binary ?? "redis-server",
    dir: await mkdtemp(join(tmpdir(), "local-upstash-redis-")),
    extraArgs: options.extraArgs ?? [],
    startTimeoutMs: options.startTimeoutMs ?? 10_000,
  };
  let port: number;
  let child: ChildProcess;
  try {
    ({ port, child } = await launchOnFreePort(config));
  } catch (error) {
    await rm(config.dir, { recursive: true, force: true });
    throw error;
  }
  // stop() and restart() run one after another even when called concurrently.
  let queue: Promise<unknown> = Promise.resolve();
  const serially = (work: () => Promise<void>): Promise<void> => {
    const result = queue.then(work);
    queue = result.catch(() => undefined);
    return result;
  };
  return {
    port,
    url: `redis://${HOST}:${port}`,
    dir: config.dir,
    stop: () =>
      serially(async () => {
        // A frozen process would ignore SIGTERM until continued.
        child.kill("SIGCONT");
        await terminate(child);
        await rm(config.dir, { recursive: true, force: true });
      }),
    restart: () =>
      serially(async () => {
        child.kill("SIGCONT");
        await terminate(child);
        child = await launch(config, port);
      }),
    freeze: () => {
      child.kill("SIGSTOP");
    },
    thaw: () => {
      child.kill("SIGCONT");
    },
  };
}

async function launchOnFreePort(config: LaunchConfig): Promise<{ port: number; child: ChildProcess }> {
  for (let attempt = 1; ; attempt += 1) {
    const port = await findFreePort(HOST);
    try {
      return { port, child: await launch(config, port) };
    } catch (error) {
      if (!(error instanceof LaunchError && error.portTaken) || attempt >= PORT_ATTEMPTS) {
        throw error;
      }
    }
  }
}

async function launch(config: LaunchConfig, port: number): Promise<ChildProcess> {
  await mkdir(config.dir, { recursive: true });
  const args = [
    ...["--port", String(port), "--bind", HOST, "--save", "", "--appendonly", "no"],
    ...["--dir", config.dir, "--daemonize", "no", "--loglevel", "warning"],
    ...config.extraArgs,
  ];
  const child = spawn(config.binary, args, { stdio: ["ignore", "pipe", "pipe"] });
  const watch: ChildWatch = { output: new OutputTail(), failure: undefined };
  child.on("error", (error) => {
    watch.failure = new LaunchError(
      `Could not run ${config.binary} (${error.message}); is it installed?`,
      false,
    );
  });
  child.on("exit", (code, signal) => {
    const output = watch.output.toString();
    watch.failure ??= new LaunchError(
      `redis-server on port ${port} exited with ${code ?? signal}: ${output}`,
      output.includes("Address already in use"),
    );
  });
  child.stdout?.on("data", (chunk: Buffer) => watch.output.push(chunk));
  child.stderr?.on("data", (chunk: Buffer) => watch.output.push(chunk));
  killOnExit(child);
  try {
    await waitUntilReady(child, port, probeHandshake(config.extraArgs), config.startTimeoutMs, watch);
    return child;
  } catch (error) {
    await terminate(child, 0);
    throw error;
  }
}

/** What a starting child did so far. */
interface ChildWatch {
  readonly output: OutputTail;
  /** Set once the child failed to spawn or exited. */
  failure: LaunchError | undefined;
}

/** A server started with `--requirepass` only answers PING after AUTH. */
function probeHandshake(extraArgs: readonly string[]): Command[] {
  const index = extraArgs.lastIndexOf("--requirepass");
  const password = index === -1 ? undefined : extraArgs[index + 1];
  return password === undefined || password === "" ? [] : [["AUTH", password]];
}

/**
 * Polls until the server answers PING, and checks through INFO that the answering server is our child: a
 * server that lost the port race would otherwise pass for it.
 */
async function waitUntilReady(
  child: ChildProcess,
  port: number,
  handshake: readonly Command[],
  timeoutMs: number,
  watch: ChildWatch,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (watch.failure !== undefined) {
      throw watch.failure;
    }
    if (await answersAsChild(port, handshake, child.pid)) {
      return;
    }
    if (Date.now() > deadline) {
      throw new LaunchError(
        `redis-server on port ${port} did not answer PING within ${timeoutMs} ms: ${watch.output}`,
        false,
      );
    }
    await new Promise((resolve) => setTimeout(resolve, PROBE_INTERVAL_MS));
  }
}

async function answersAsChild(
  port: number,
  handshake: readonly Command[],
  pid: number | undefined,
): Promise<boolean> {
  if (pid === undefined) {
    return false;
  }
  const connection = new RespConnection({ host: HOST, port, connectTimeoutMs: 1000, handshake });
  try {
    const [pong, info] = await connection.send([["PING"], ["INFO", "server"]]);
    return (
      pong instanceof RespStatus &&
      pong.text === "PONG" &&
      Buffer.isBuffer(info) &&
      info.toString().includes(`process_id:${pid}\r\n`)
    );
  } catch {
    return false;
  } finally {
    connection.close();
  }
}
