// Worker processes of the demo, the soak and the chaos run, both ends. A worker is `node [flags]
// --import tsx <script>` run from the repository root, like a separate server contending for the
// lock. It gets its settings as one JSON environment variable, writes one JSON object per line on
// stdout, and reads one "go" line on stdin once every worker is ready (then any lines its parent
// sends); stdin closing asks it to stop.

import { type ChildProcess, spawn } from "node:child_process";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";

const REPO_ROOT = fileURLToPath(new URL("../..", import.meta.url));
/** The environment variable that carries a worker's settings, as JSON. */
const CONFIG_ENV = "LOCK_WORKER_CONFIG";

/** Sent by the parent once every worker is ready, so that all of them start together. */
export interface GoMessage {
  /** Wall-clock ms (Date.now()) after which a worker starts no new round. */
  readonly deadline: number;
}

export interface ExitInfo {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  /** Date.now() when the process exited. */
  readonly at: number;
}

/** How to start one worker and read what it writes. */
export interface WorkerSpec<Message> {
  readonly name: string;
  /** The worker's script, e.g. `new URL("./worker.ts", import.meta.url)`. */
  readonly script: URL;
  /** Its settings: JSON, read by the worker with {@link workerConfig}. */
  readonly config: unknown;
  /** Node flags before `--import tsx`, e.g. `--expose-gc`. */
  readonly nodeArgs?: readonly string[];
  /** Reads one stdout line as a protocol message; undefined for anything else, kept in `output`. */
  parse(line: string): Message | undefined;
  /** Whether `message` says the worker is ready for its go line. */
  isReady(message: Message): boolean;
  /** Gets every message as it arrives, with Date.now() at its arrival. */
  onMessage?(message: Message, at: number): void;
}

/** A running worker. */
export interface WorkerProcess {
  readonly name: string;
  /** Resolves once the worker said it is ready; rejects if it exits before. */
  readonly ready: Promise<void>;
  readonly exited: Promise<ExitInfo>;
  /** Everything it printed besides protocol lines (stderr included), for error reports. */
  readonly output: string[];
  /** Tells the worker to start. */
  go(message: GoMessage): void;
  /** Writes one more line to the worker after its go line (see {@link waitForGo}'s `onMessage`). */
  send(message: object): void;
  /** Sends `signal` (SIGSTOP, SIGCONT...) if the process still runs. */
  signal(signal: NodeJS.Signals): void;
  /** Closes its stdin, which asks it to stop. */
  closeInput(): void;
  /** SIGTERM, then SIGKILL after `graceMs`; resolves once the process is gone. */
  stop(graceMs?: number): Promise<ExitInfo>;
  /** SIGKILL if it still runs; resolves once the process is gone. */
  kill(): Promise<ExitInfo>;
}

/** Every worker still running; the exit hook kills them if the parent dies unexpectedly. */
const running = new Set<ChildProcess>();
let exitHook = false;

function isRunning(child: ChildProcess): boolean {
  return child.exitCode === null && child.signalCode === null;
}

/** Starts one worker; its stdin stays open for the run. */
export function startWorker<Message>(spec: WorkerSpec<Message>): WorkerProcess {
  if (!exitHook) {
    exitHook = true;
    process.on("exit", () => {
      for (const child of running) child.kill("SIGKILL");
    });
  }
  const child = spawn(
    process.execPath,
    [...(spec.nodeArgs ?? []), "--import", "tsx", fileURLToPath(spec.script)],
    {
      // The repository root, so that `--import tsx` resolves from its node_modules.
      cwd: REPO_ROOT,
      env: { ...process.env, [CONFIG_ENV]: JSON.stringify(spec.config) },
      stdio: ["pipe", "pipe", "pipe"],
    },
  );
  running.add(child);
  const output: string[] = [];
  const exited = new Promise<ExitInfo>((resolve) => {
    child.once("exit", (code, signal) => {
      running.delete(child);
      resolve({ code, signal, at: Date.now() });
    });
    child.once("error", (error) => {
      output.push(`could not start: ${error.message}`);
      running.delete(child);
      resolve({ code: null, signal: null, at: Date.now() });
    });
  });
  let markReady: () => void = () => {};
  const ready = new Promise<void>((resolve, reject) => {
    markReady = resolve;
    exited.then(() => reject(new Error(`${spec.name} exited before it was ready:\n${output.join("\n")}`)));
  });
  // A rejection of `ready` after the run started is of no interest.
  ready.catch(() => {});
  createInterface({ input: child.stdout as NodeJS.ReadableStream }).on("line", (line) => {
    const message = spec.parse(line);
    if (message === undefined) {
      if (line.trim() !== "") output.push(line);
      return;
    }
    if (spec.isReady(message)) markReady();
    spec.onMessage?.(message, Date.now());
  });
  createInterface({ input: child.stderr as NodeJS.ReadableStream }).on("line", (line) => output.push(line));
  // A worker that exits early closes its stdin; writing to it then must not crash the parent.
  child.stdin?.on("error", () => {});
  return {
    name: spec.name,
    ready,
    exited,
    output,
    go: (message) => child.stdin?.write(`${JSON.stringify(message)}\n`),
    send: (message) => child.stdin?.write(`${JSON.stringify(message)}\n`),
    signal: (signal) => {
      if (isRunning(child)) child.kill(signal);
    },
    closeInput: () => child.stdin?.end(),
    stop: async (graceMs = 2_000) => {
      if (!isRunning(child)) return exited;
      child.kill("SIGTERM");
      const timer = setTimeout(() => child.kill("SIGKILL"), graceMs);
      const info = await exited;
      clearTimeout(timer);
      return info;
    },
    kill: () => {
      if (isRunning(child)) child.kill("SIGKILL");
      return exited;
    },
  };
}

/** In a worker: the settings its parent started it with. `parent` names the parent in the error. */
export function workerConfig<Config>(parent: string): Config {
  const text = process.env[CONFIG_ENV];
  if (!text) throw new Error(`${CONFIG_ENV} is not set; this worker is started by ${parent}`);
  return JSON.parse(text) as Config;
}

/**
 * In a worker: resolves with the parent's go line, or undefined if stdin closes first. Stdin stays
 * open for the rest of the run, so that its closing (`onClose`) tells the worker to stop, whatever
 * way the parent went; every line after the go line goes to `onMessage` (the parent's `send`).
 */
export function waitForGo(
  onClose: () => void,
  onMessage?: (message: unknown) => void,
): Promise<GoMessage | undefined> {
  const lines = createInterface({ input: process.stdin });
  return new Promise((resolve) => {
    let started = false;
    lines.on("line", (line) => {
      if (started) onMessage?.(JSON.parse(line));
      else resolve(JSON.parse(line) as GoMessage);
      started = true;
    });
    lines.once("close", () => {
      resolve(undefined);
      onClose();
    });
  });
}
