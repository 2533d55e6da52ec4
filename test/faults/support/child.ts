import { type ChildProcess, spawn } from "node:child_process";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { afterEach } from "vitest";
import { now } from "./time";

/** A line a child printed, with the moment (this process's monotonic clock) it arrived. */
export interface TimedLine {
  readonly at: number;
  readonly text: string;
}

/** A running TypeScript child process whose output lines are timestamped as they arrive. */
export interface WatchedChild {
  /** Resolves with the first line (past or future) matching `pattern`; rejects if the child exits first. */
  line(pattern: RegExp): Promise<TimedLine>;
  /** Resolves when the child has exited, with the moment it did. */
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null; at: number }>;
  /** Everything it printed so far, for failure messages. */
  output(): string;
  /** Kills the process (SIGKILL by default: no chance to clean up) and resolves once it exited. */
  kill(signal?: NodeJS.Signals): Promise<void>;
}

const running = new Set<ChildProcess>();
afterEach(() => {
  // A test that failed half-way must not leave its child behind.
  for (const child of running) child.kill("SIGKILL");
  running.clear();
});

/** Runs a TypeScript file in a fresh Node process (through tsx), watching its output line by line. */
export function watchTypeScript(file: URL, env: Record<string, string>): WatchedChild {
  const child = spawn(process.execPath, ["--import", "tsx", fileURLToPath(file)], {
    env: { ...process.env, ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  running.add(child);
  const lines: TimedLine[] = [];
  const waiters = new Set<() => void>();
  let stderr = "";
  child.stderr?.on("data", (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  createInterface({ input: child.stdout as NodeJS.ReadableStream }).on("line", (text) => {
    lines.push({ at: now(), text });
    for (const wake of waiters) wake();
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null; at: number }>(
    (resolve) => {
      child.once("exit", (code, signal) => {
        const at = now();
        running.delete(child);
        resolve({ code, signal, at });
      });
    },
  );
  // "close" comes after the last line was read, unlike "exit".
  const closed = new Promise<void>((resolve) => child.once("close", () => resolve()));
  const output = () => `stdout:\n${lines.map((line) => line.text).join("\n")}\nstderr:\n${stderr}`;
  return {
    exited,
    output,
    async kill(signal = "SIGKILL") {
      child.kill(signal);
      await exited;
    },
    line(pattern) {
      return new Promise((resolve, reject) => {
        const check = () => {
          const found = lines.find((line) => pattern.test(line.text));
          if (!found) return;
          waiters.delete(check);
          resolve(found);
        };
        waiters.add(check);
        check();
        closed.then(() => {
          if (waiters.delete(check)) reject(new Error(`exited without printing ${pattern}\n${output()}`));
        });
      });
    },
  };
}
