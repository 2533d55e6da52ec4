import { parseArgs } from "node:util";
import { type LocalStackOptions, startLocalStack } from "./local-stack";
import { SCRIPT_FLAGS_MODES, type ScriptFlagsMode } from "./proxy/scripts/script-gateway";

/**
 * `npm run local-upstash [-- --port N] [--redis-url redis://...] [--token T] [--host H]
 *   [--script-flags emulate|accept|forward]`
 *
 * Prints exactly two lines to stdout, ready for `eval` or a `.env` file:
 *   UPSTASH_REDIS_REST_URL=http://127.0.0.1:PORT
 *   UPSTASH_REDIS_REST_TOKEN=TOKEN
 * then serves until SIGINT or SIGTERM, stops what it started and exits 0. Everything else goes to stderr.
 */

const USAGE =
  "usage: local-upstash [--port N] [--redis-url redis://host:port] [--token T] [--host H] [--script-flags emulate|accept|forward]";

/** Thrown for bad command-line arguments; exits 2 with the usage line. */
class UsageError extends Error {}

function parseCliOptions(argv: string[]): LocalStackOptions {
  let values: Record<string, string | boolean | undefined>;
  try {
    ({ values } = parseArgs({
      args: argv,
      options: {
        port: { type: "string" },
        "redis-url": { type: "string" },
        token: { type: "string" },
        host: { type: "string" },
        "script-flags": { type: "string" },
      },
      strict: true,
      allowPositionals: false,
    }));
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
  const { port, "redis-url": redisUrl, token, host, "script-flags": scriptFlags } = values;
  if (port !== undefined && !/^\d+$/.test(String(port))) {
    throw new UsageError(`--port must be a port number, got ${JSON.stringify(port)}`);
  }
  if (scriptFlags !== undefined && !isScriptFlagsMode(scriptFlags)) {
    throw new UsageError(
      `--script-flags must be emulate, accept or forward, got ${JSON.stringify(scriptFlags)}`,
    );
  }
  return {
    ...(typeof port === "string" ? { port: Number(port) } : {}),
    ...(typeof redisUrl === "string" ? { redisUrl } : {}),
    ...(typeof token === "string" ? { token } : {}),
    ...(typeof host === "string" ? { host } : {}),
    ...(scriptFlags === undefined ? {} : { scriptFlags }),
  };
}

function isScriptFlagsMode(value: unknown): value is ScriptFlagsMode {
  return SCRIPT_FLAGS_MODES.some((mode) => mode === value);
}

/** Resolves on the first SIGINT or SIGTERM; listening starts at once so a signal during startup is not lost. */
function firstSignal(): Promise<NodeJS.Signals> {
  return new Promise((resolve) => {
    process.once("SIGINT", resolve);
    process.once("SIGTERM", resolve);
  });
}

async function main(): Promise<void> {
  const signal = firstSignal();
  const stack = await startLocalStack(parseCliOptions(process.argv.slice(2)));
  process.stdout.write(`UPSTASH_REDIS_REST_URL=${stack.url}\nUPSTASH_REDIS_REST_TOKEN=${stack.token}\n`);
  const backend =
    stack.redis === undefined ? `existing Redis ${stack.redisUrl}` : `redis-server ${stack.redisUrl}`;
  process.stderr.write(`local-upstash: serving ${stack.url} in front of ${backend}; stop with Ctrl-C\n`);
  const received = await signal;
  process.stderr.write(`local-upstash: ${received} received, stopping\n`);
  await stack.stop();
  process.exit(0);
}

main().catch((error: unknown) => {
  const usage = error instanceof UsageError;
  process.stderr.write(`local-upstash: ${error instanceof Error ? error.message : String(error)}\n`);
  if (usage) {
    process.stderr.write(`${USAGE}\n`);
  }
  process.exit(usage ? 2 : 1);
});
