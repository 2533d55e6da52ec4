import { type ChildProcess, fork } from "node:child_process";
import { fileURLToPath } from "node:url";

/**
 * Benchmark child processes: forked with an IPC channel, running TypeScript through tsx. Every child
 * started here is tracked by its process, so an interrupted run can end exactly those.
 */

const running = new Set<ChildProcess>();

/** Node flags that let a child run a `.ts` file. */
function loaderArgs(): string[] {
  return ["--import", import.meta.resolve("tsx")];
}

/** A message from a child: `{ type, ...payload }`. */
export interface ChildMessage {
  readonly type: string;
  readonly [field: string]: unknown;
}

/** A forked benchmark process and a way to await its messages in order. */
export class Child {
  readonly process: ChildProcess;
  readonly #inbox: ChildMessage[] = [];
  #waiter: { resolve: (message: ChildMessage) => void; reject: (error: Error) => void } | undefined;
  #exit: Error | undefined;

  constructor(file: string, config: unknown, extraNodeArgs: readonly string[] = []) {
    this.process = fork(fileURLToPath(new URL(file, import.meta.url)), [], {
      execArgv: [...extraNodeArgs, ...loaderArgs()],
      env: { ...process.env, BENCH_CHILD_CONFIG: JSON.stringify(config) },
      stdio: ["ignore", "inherit", "inherit", "ipc"],
    });
    running.add(this.process);
    this.process.on("message", (message: ChildMessage) => {
      const waiter = this.#waiter;
      if (waiter) {
        this.#waiter = undefined;
        if (message.type === "error") waiter.reject(new Error(`${file}: ${String(message.message)}`));
        else waiter.resolve(message);
      } else this.#inbox.push(message);
    });
    this.process.on("exit", (code, signal) => {
      running.delete(this.process);
      this.#exit = new Error(`${file} exited with ${code ?? signal} before answering`);
      this.#waiter?.reject(this.#exit);
      this.#waiter = undefined;
    });
  }

  /** The next message, in arrival order; rejects if the child exits first or reports an error. */
  next(timeoutMs = 120_000): Promise<ChildMessage> {
    const queued = this.#inbox.shift();
    if (queued) {
      return queued.type === "error"
        ? Promise.reject(new Error(String(queued.message)))
        : Promise.resolve(queued);
    }
    if (this.#exit) return Promise.reject(this.#exit);
    return new Promise<ChildMessage>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.#waiter = undefined;
        reject(new Error(`no answer from child ${this.process.pid} within ${timeoutMs} ms`));
      }, timeoutMs);
      this.#waiter = {
        resolve: (message) => {
          clearTimeout(timer);
          resolve(message);
        },
        reject: (error) => {
          clearTimeout(timer);
          reject(error);
        },
      };
    });
  }

  send(message: ChildMessage): void {
    this.process.send(message);
  }

  /** Asks the child to exit, and kills it if it has not after a grace period. */
  async stop(graceMs = 3_000): Promise<void> {
    const child = this.process;
    if (child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
    if (child.connected) child.disconnect();
    const timer = setTimeout(() => child.kill("SIGKILL"), graceMs);
    await exited;
    clearTimeout(timer);
  }
}

/** Runs a one-shot child to completion and returns its `result` message. */
export async function runChild<T>(
  file: string,
  config: unknown,
  options: { nodeArgs?: readonly string[]; timeoutMs?: number } = {},
): Promise<T> {
  const child = new Child(file, config, options.nodeArgs);
  try {
    const message = await child.next(options.timeoutMs);
    return message.result as T;
  } finally {
    await child.stop();
  }
}

/** Kills every child still running (on Ctrl-C or a fatal error), each by its own process. */
export function killChildren(): void {
  for (const child of running) child.kill("SIGKILL");
  running.clear();
}

/**
 * For the child side: the configuration it was started with, and the channel it reports on. A child
 * exits when its parent disconnects or dies, so none outlives the run.
 */
export function childConfig<T>(): T {
  process.on("disconnect", () => process.exit(0));
  return JSON.parse(process.env.BENCH_CHILD_CONFIG ?? "null") as T;
}

export function report(message: ChildMessage): void {
  process.send?.(message);
}

/** Reports a failure to the parent instead of dying silently. */
export function reportFailure(error: unknown): void {
  report({ type: "error", message: error instanceof Error ? (error.stack ?? error.message) : String(error) });
}
