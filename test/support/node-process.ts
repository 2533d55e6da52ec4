import { execFile } from "node:child_process";
import { fileURLToPath } from "node:url";

/** Runs a TypeScript file in a fresh Node process (through tsx) and resolves with its stdout. */
export function runTypeScript(
  file: URL,
  env: Record<string, string>,
  timeoutMs = 60_000,
): Promise<{ stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      ["--import", "tsx", fileURLToPath(file)],
      { env: { ...process.env, ...env }, timeout: timeoutMs },
      (error, stdout, stderr) => {
        if (error) reject(Object.assign(error, { stdout, stderr }));
        else resolve({ stdout, stderr });
      },
    );
  });
}

/** The last JSON line a child process printed. */
export function lastJsonLine<T>(stdout: string): T {
  const lines = stdout.trim().split("\n");
  return JSON.parse(lines[lines.length - 1] ?? "null") as T;
}
