import type { ChildProcess } from "node:child_process";

const running = new Set<ChildProcess>();
let exitHookInstalled = false;

/**
 * Kills `child` when this process exits, so a crashed or interrupted test run leaves no redis-server behind.
 * (Only a normal exit runs the hook: a process killed by an unhandled signal cannot clean up.)
 */
export function killOnExit(child: ChildProcess): void {
  if (!exitHookInstalled) {
    exitHookInstalled = true;
    process.on("exit", () => {
      for (const spawned of running) {
        spawned.kill("SIGKILL");
      }
    });
  }
  running.add(child);
  child.once("exit", () => running.delete(child));
}

/** Whether the child has exited (or was never started). */
export function hasExited(child: ChildProcess): boolean {
  return child.exitCode !== null || child.signalCode !== null || child.pid === undefined;
}

/**
 * Stops a child: SIGTERM, then SIGKILL if it is still running after `graceMs`. Resolves once it exited.
 */
export async function terminate(child: ChildProcess, graceMs = 5000): Promise<void> {
  if (hasExited(child)) {
    return;
  }
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  child.kill("SIGTERM");
  const escalation = setTimeout(() => child.kill("SIGKILL"), graceMs);
  await exited;
  clearTimeout(escalation);
}

/** Keeps the last `limit` characters a child printed, for error messages. */
export class OutputTail {
  #text = "";

  constructor(readonly limit = 4000) {}

  /** Appends a chunk of output. */
  push(chunk: Buffer | string): void {
    this.#text = (this.#text + chunk.toString()).slice(-this.limit);
  }

  /** The kept output, trimmed. */
  toString(): string {
    return this.#text.trim();
  }
}
