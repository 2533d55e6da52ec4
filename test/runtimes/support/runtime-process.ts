import { execFile, execFileSync } from "node:child_process";
import { inject, type TestContext } from "vitest";

/** Whether a runtime can run here, and if not, why not (shown in the skipped test's name). */
export type Availability =
  | { readonly available: true; readonly version: string }
  | { readonly available: false; readonly reason: string };

/**
 * Probes a runtime honestly: the binary must exist and answer `args` (e.g. `--version`) with exit code 0.
 * A runtime that is missing or broken is reported as unavailable with the error, never assumed to work.
 */
export function probe(binary: string, args: readonly string[] = ["--version"]): Availability {
  try {
    const out = execFileSync(binary, args, {
      encoding: "utf8",
      timeout: 15_000,
      stdio: ["ignore", "pipe", "pipe"],
    });
    return { available: true, version: out.trim().split("\n")[0] ?? "" };
  } catch (error) {
    const { code, stderr, message } = error as NodeJS.ErrnoException & { stderr?: string };
    const detail = code === "ENOENT" ? "not installed" : (stderr?.trim() || message).split("\n")[0];
    return { available: false, reason: `${binary}: ${detail}` };
  }
}

/**
 * Skips the running test when its runtime is unavailable, and prints why: vitest's default reporter does not
 * list skipped tests by name, and a skipped runtime must never pass unnoticed.
 */
export function skipIfUnavailable(context: TestContext, availability: Availability): void {
  if (availability.available) return;
  console.log(`SKIPPED, runtime unavailable: ${availability.reason}`);
  context.skip(availability.reason);
}

/** The test's title, with the reason appended when the runtime is skipped (shown by the verbose reporter). */
export function titled(title: string, availability: Availability): string {
  return availability.available ? title : `${title} [SKIPPED: ${availability.reason}]`;
}

/**
 * Environment for a runtime process: the suite's endpoint, a key prefix of its own, and switches that keep
 * Bun and Deno off the network (no update checks, no telemetry). Loopback never goes through a proxy.
 */
export function runtimeEnv(label: string): Record<string, string> {
  return {
    ...(process.env as Record<string, string>),
    UPSTASH_REDIS_REST_URL: inject("upstashUrl"),
    UPSTASH_REDIS_REST_TOKEN: inject("upstashToken"),
    LOCK_PREFIX: uniquePrefix(label),
    NO_PROXY: "127.0.0.1,localhost",
    DENO_NO_UPDATE_CHECK: "1",
    DENO_NO_PROMPT: "1",
    DO_NOT_TRACK: "1",
  };
}

/** Keys of one scenario run, distinct from every other test's. */
export function uniquePrefix(label: string): string {
  return `test:runtime:${label}:${crypto.randomUUID().slice(0, 8)}`;
}

/**
 * Runs a program to completion and parses the JSON line it printed last.
 *
 * @throws Error with the program's stdout and stderr when it fails, times out or prints no JSON.
 */
export function runForJson<T>(
  command: string,
  args: readonly string[],
  options: { cwd: string; env: Record<string, string>; timeoutMs?: number },
): Promise<T> {
  return new Promise((resolve, reject) => {
    execFile(
      command,
      args,
      {
        cwd: options.cwd,
        env: options.env,
        timeout: options.timeoutMs ?? 25_000,
        maxBuffer: 4 * 1024 * 1024,
      },
      (error, stdout, stderr) => {
        const output = `\n--- stdout\n${stdout}\n--- stderr\n${stderr}`;
        if (error) {
          reject(new Error(`${command} ${args.join(" ")} failed: ${error.message}${output}`));
          return;
        }
        const last = stdout.trim().split("\n").at(-1) ?? "";
        try {
          resolve(JSON.parse(last) as T);
        } catch {
          reject(new Error(`${command} printed no JSON result${output}`));
        }
      },
    );
  });
}
