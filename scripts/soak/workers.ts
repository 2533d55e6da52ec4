// Starting, talking to and stopping the soak's worker processes (scripts/soak/worker.ts).

import { type ChildProcess, spawn } from "node:child_process";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { type GoMessage, parseWorkerLine, SOAK_ENV, type WorkerReport } from "./protocol";

const REPO_ROOT = fileURLToPath(new URL("../..", import.meta.url));
const WORKER_SCRIPT = fileURLToPath(new URL("./worker.ts", import.meta.url));

/** What a worker is told: where to send the lock's requests and the occupancy counter's. */
export interface WorkerSettings {
  name: string;
  lockUrl: string;
  directUrl: string;
  token: string;
  lockId: string;
  occupancyKey: string;
  careless: boolean;
}

export interface ExitInfo {
  code: number | null;
  signal: NodeJS.Signals | null;
  /** Date.now() when the process exited. */
  at: number;
}

export interface SoakWorker {
  readonly name: string;
  /** Resolves on the worker's "ready" line; rejects if it exits before. */
  readonly ready: Promise<void>;
  readonly exited: Promise<ExitInfo>;
  /** The report, once it arrived, and when (Date.now()). */
  report(): { report: WorkerReport; at: number } | undefined;
  /** Everything it printed besides protocol lines (stderr included), for error reports. */
  readonly output: string[];
  go(message: GoMessage): void;
  /** Closes its stdin, which asks it to stop early (it still reports). */
  requestStop(): void;
  /** Kills the process (SIGKILL) if it still runs; resolves once it is gone. */
  kill(): Promise<ExitInfo>;
}

/** Every worker still running; killed if the soak itself exits unexpectedly. */
const running = new Set<ChildProcess>();
process.on("exit", () => {
  for (const child of running) child.kill("SIGKILL");
});

/**
 * Starts one worker as `node --expose-gc --import tsx scripts/soak/worker.ts`. Its stdin stays
 * open for the run: closing it asks the worker to stop.
 */
export function startWorker(settings: WorkerSettings): SoakWorker {
  const child = spawn(process.execPath, ["--expose-gc", "--import", "tsx", WORKER_SCRIPT], {
    // The repository root, so that `--import tsx` resolves from its node_modules.
    cwd: REPO_ROOT,
    env: {
      ...process.env,
      [SOAK_ENV.name]: settings.name,
      [SOAK_ENV.lockUrl]: settings.lockUrl,
      [SOAK_ENV.directUrl]: settings.directUrl,
      [SOAK_ENV.token]: settings.token,
      [SOAK_ENV.lockId]: settings.lockId,
      [SOAK_ENV.occupancyKey]: settings.occupancyKey,
      [SOAK_ENV.careless]: settings.careless ? "1" : "0",
    },
    stdio: ["pipe", "pipe", "pipe"],
  });
  running.add(child);
  const output: string[] = [];
  let received: { report: WorkerReport; at: number } | undefined;
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
    exited.then(() =>
      reject(new Error(`${settings.name} exited before it was ready:\n${output.join("\n")}`)),
    );
  });
  // A rejection of `ready` after the run started is of no interest.
  ready.catch(() => {});
  createInterface({ input: child.stdout as NodeJS.ReadableStream }).on("line", (line) => {
    const message = parseWorkerLine(line);
    if (message?.type === "ready") markReady();
    else if (message?.type === "report") received = { report: message, at: Date.now() };
    else if (line.trim() !== "") output.push(line);
  });
  createInterface({ input: child.stderr as NodeJS.ReadableStream }).on("line", (line) => output.push(line));
  // A worker that exits early closes its stdin; writing to it then must not crash the soak.
  child.stdin?.on("error", () => {});
  return {
    name: settings.name,
    ready,
    exited,
    output,
    report: () => received,
    go: (message) => child.stdin?.write(`${JSON.stringify(message)}\n`),
    requestStop: () => child.stdin?.end(),
    kill: () => {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
      return exited;
    },
  };
}
