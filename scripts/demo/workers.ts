// Starting, talking to and stopping the worker processes (scripts/demo-worker.ts).

import { type ChildProcess, spawn } from "node:child_process";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { type GoMessage, parseEvent, WORKER_ENV, type WorkerEvent, type WorkloadName } from "./protocol";

const REPO_ROOT = fileURLToPath(new URL("../..", import.meta.url));
const WORKER_SCRIPT = fileURLToPath(new URL("../demo-worker.ts", import.meta.url));
/** How long a worker may take to exit after SIGTERM before it is killed. */
const STOP_GRACE_MS = 2_000;

export interface WorkerSettings {
  url: string;
  token: string;
  lockId: string;
  occupancyKey: string;
  /** Whether the worker's Lock is created with `fair: true`. */
  fair: boolean;
  workload: WorkloadName;
}

export interface ExitInfo {
  code: number | null;
  signal: NodeJS.Signals | null;
}

export interface WorkerProcess {
  name: string;
  /** Resolves on the worker's "ready" event; rejects if it exits before. */
  ready: Promise<void>;
  /** Resolves when the process has exited. */
  exited: Promise<ExitInfo>;
  /** Whatever the worker printed that is not an event (stderr, stray stdout), for error reports. */
  output: string[];
  /** Tells the worker to start. */
  go(message: GoMessage): void;
  /** SIGTERM, then SIGKILL after a grace period; resolves once the process is gone. */
  stop(): Promise<ExitInfo>;
}

/** Every worker still running; the exit hook below kills them if the demo dies unexpectedly. */
const running = new Set<ChildProcess>();
process.on("exit", () => {
  for (const child of running) child.kill("SIGKILL");
});

function isRunning(child: ChildProcess): boolean {
  return child.exitCode === null && child.signalCode === null;
}

function collectLines(
  child: ChildProcess,
  name: string,
  output: string[],
  onEvent: (event: WorkerEvent) => void,
): void {
  if (child.stdout) {
    createInterface({ input: child.stdout }).on("line", (line) => {
      const event = parseEvent(line);
      if (event && event.worker === name) onEvent(event);
      else if (line.trim() !== "") output.push(line);
    });
  }
  if (child.stderr) {
    createInterface({ input: child.stderr }).on("line", (line) => output.push(line));
  }
}

/**
 * Starts one worker as `node --import tsx scripts/demo-worker.ts`: a separate process, like
 * separate servers contending for one lock. `onEvent` gets its events as they arrive.
 */
export function startWorker(
  name: string,
  settings: WorkerSettings,
  onEvent: (event: WorkerEvent) => void,
): WorkerProcess {
  const child = spawn(process.execPath, ["--import", "tsx", WORKER_SCRIPT], {
    // The repository root, so that `--import tsx` resolves from its node_modules.
    cwd: REPO_ROOT,
    env: {
      ...process.env,
      [WORKER_ENV.url]: settings.url,
      [WORKER_ENV.token]: settings.token,
      [WORKER_ENV.lockId]: settings.lockId,
      [WORKER_ENV.occupancyKey]: settings.occupancyKey,
      [WORKER_ENV.name]: name,
      [WORKER_ENV.fair]: String(settings.fair),
      [WORKER_ENV.workload]: settings.workload,
    },
    stdio: ["pipe", "pipe", "pipe"],
  });
  running.add(child);
  const output: string[] = [];
  const exited = new Promise<ExitInfo>((resolve) => {
    child.once("exit", (code, signal) => {
      running.delete(child);
      resolve({ code, signal });
    });
    child.once("error", (error) => {
      output.push(`could not start: ${error.message}`);
      running.delete(child);
      resolve({ code: null, signal: null });
    });
  });
  let markReady: () => void = () => {};
  const ready = new Promise<void>((resolve, reject) => {
    markReady = resolve;
    exited.then(() => reject(new Error(`${name} exited before it was ready:\n${output.join("\n")}`)));
  });
  // Rejections of `ready` after the run started are of no interest.
  ready.catch(() => {});
  collectLines(child, name, output, (event) => {
    if (event.event === "ready") markReady();
    // Kept with the output too, so that a worker failing before it is ready explains why.
    if (event.event === "error") output.push(`error: ${event.message}`);
    onEvent(event);
  });
  // A worker that exits early closes its stdin; writing to it then must not crash the demo.
  child.stdin?.on("error", () => {});
  return {
    name,
    ready,
    exited,
    output,
    go: (message) => child.stdin?.write(`${JSON.stringify(message)}\n`),
    stop: async () => {
      if (isRunning(child)) {
        child.kill("SIGTERM");
        const timer = setTimeout(() => child.kill("SIGKILL"), STOP_GRACE_MS);
        const info = await exited;
        clearTimeout(timer);
        return info;
      }
      return exited;
    },
  };
}
