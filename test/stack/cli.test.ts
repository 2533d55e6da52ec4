import { type ChildProcess, spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { findFreePort } from "../../stack/free-port";
import { startRedisServer } from "../../stack/redis-server";
import { RespConnection } from "../../stack/resp/connection";
import { createClient } from "./helpers/clients";
import { keyPrefix } from "./helpers/keys";
import { httpRequest, rawExchange } from "./helpers/raw-socket";

const REPO_ROOT = fileURLToPath(new URL("../..", import.meta.url));

interface CliRun {
  readonly child: ChildProcess;
  /** Resolves with the two lines once both are printed. */
  readonly lines: Promise<[string, string]>;
  /** Resolves with the exit code and everything printed. */
  readonly exit: Promise<{ code: number | null; stdout: string; stderr: string }>;
  /** What the CLI wrote to stderr so far. */
  stderr(): string;
}

function runCli(args: string[]): CliRun {
  const child = spawn(process.execPath, ["--import", "tsx", "stack/cli.ts", ...args], {
    cwd: REPO_ROOT,
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  let announce: (lines: [string, string]) => void = () => undefined;
  const lines = new Promise<[string, string]>((resolve) => {
    announce = resolve;
  });
  child.stdout?.on("data", (chunk: Buffer) => {
    stdout += chunk.toString();
    const printed = stdout.split("\n");
    if (printed.length >= 3) {
      announce([printed[0] ?? "", printed[1] ?? ""]);
    }
  });
  child.stderr?.on("data", (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const exit = new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
    child.on("exit", (code) => resolve({ code, stdout, stderr }));
  });
  const linesOrEarlyExit = Promise.race([
    lines,
    exit.then((run) => Promise.reject(new Error(`CLI exited early: ${run.stderr}`))),
  ]);
  // A run that is expected to fail never awaits its lines; that must not be an unhandled rejection.
  linesOrEarlyExit.catch(() => undefined);
  return {
    child,
    lines: linesOrEarlyExit,
    exit,
    stderr: () => stderr,
  };
}

function assignedValue(line: string, name: string): string {
  expect(line.startsWith(`${name}=`)).toBe(true);
  return line.slice(name.length + 1);
}

describe("local-upstash CLI", () => {
  it("prints exactly two lines, serves, and exits 0 on SIGTERM, stopping its redis-server", async () => {
    const run = runCli([]);
    const [urlLine, tokenLine] = await run.lines;
    const url = assignedValue(urlLine, "UPSTASH_REDIS_REST_URL");
    const token = assignedValue(tokenLine, "UPSTASH_REDIS_REST_TOKEN");
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(await createClient({ url, token }).ping()).toBe("PONG");
    // The CLI names the redis-server it started on stderr.
    await expect.poll(() => run.stderr()).toMatch(/redis:\/\/127\.0\.0\.1:\d+/);
    const redisPort = Number(/redis:\/\/127\.0\.0\.1:(\d+)/.exec(run.stderr())?.[1]);
    run.child.kill("SIGTERM");
    const { code, stdout } = await run.exit;
    expect(code).toBe(0);
    expect(stdout).toBe(`${urlLine}\n${tokenLine}\n`);
    const connection = new RespConnection({ host: "127.0.0.1", port: redisPort });
    await expect(connection.call("PING")).rejects.toThrow(/ECONNREFUSED/);
  });

  it("takes --port, --token and --redis-url, and leaves a given Redis running on SIGINT", async () => {
    const redis = await startRedisServer();
    const port = await findFreePort();
    const run = runCli(["--port", String(port), "--token", "cli-token", "--redis-url", redis.url]);
    const connection = new RespConnection({ host: "127.0.0.1", port: redis.port });
    try {
      const [urlLine, tokenLine] = await run.lines;
      expect(urlLine).toBe(`UPSTASH_REDIS_REST_URL=http://127.0.0.1:${port}`);
      expect(tokenLine).toBe("UPSTASH_REDIS_REST_TOKEN=cli-token");
      const key = keyPrefix("cli");
      await createClient({ url: `http://127.0.0.1:${port}`, token: "cli-token" }).set(key, "via cli");
      run.child.kill("SIGINT");
      expect((await run.exit).code).toBe(0);
      expect(String(await connection.call("GET", key))).toBe("via cli");
    } finally {
      run.child.kill("SIGKILL");
      connection.close();
      await redis.stop();
    }
  });

  it("takes --script-flags forward, so Redis judges allow-key-locking itself", async () => {
    const run = runCli(["--script-flags", "forward"]);
    try {
      const [urlLine, tokenLine] = await run.lines;
      const redis = createClient({
        url: assignedValue(urlLine, "UPSTASH_REDIS_REST_URL"),
        token: assignedValue(tokenLine, "UPSTASH_REDIS_REST_TOKEN"),
      });
      await expect(redis.eval("#!lua flags=allow-key-locking\nreturn 1", [], [])).rejects.toThrow(
        "ERR Unexpected flag in script shebang: allow-key-locking",
      );
    } finally {
      run.child.kill("SIGTERM");
      await run.exit;
    }
  });

  // These requests once threw a URIError out of the request listener, which killed the process and the
  // redis-server it had started.
  it("survives malformed percent-escapes in subscription paths, sent without a token", async () => {
    const run = runCli([]);
    try {
      const [urlLine, tokenLine] = await run.lines;
      const url = assignedValue(urlLine, "UPSTASH_REDIS_REST_URL");
      const token = assignedValue(tokenLine, "UPSTASH_REDIS_REST_TOKEN");
      const port = Number(new URL(url).port);
      for (const [method, path] of [
        ["POST", "/subscribe/%ZZ"],
        ["GET", "/psubscribe/%E0%A4%A"],
      ] as const) {
        const outcome = await rawExchange(port, [httpRequest(method, path, {}, "[]")], { method });
        expect(outcome).toMatchObject({ kind: "answered", status: 401, body: '{"error":"Unauthorized"}' });
      }
      expect(run.child.exitCode).toBe(null);
      expect(await createClient({ url, token }).ping()).toBe("PONG");
    } finally {
      run.child.kill("SIGTERM");
      await run.exit;
    }
  });

  it("exits 2 with the usage on an unknown --script-flags mode", async () => {
    const { code, stderr } = await runCli(["--script-flags", "strip"]).exit;
    expect(code).toBe(2);
    expect(stderr).toContain('--script-flags must be emulate, accept or forward, got "strip"');
    expect(stderr).toContain("usage: local-upstash");
  });

  it("exits 2 with the usage on an unknown option", async () => {
    const { code, stdout, stderr } = await runCli(["--nope"]).exit;
    expect(code).toBe(2);
    expect(stdout).toBe("");
    expect(stderr).toContain("usage: local-upstash");
  });
});
