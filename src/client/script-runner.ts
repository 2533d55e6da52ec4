import { describeValue } from "../describe-value";
import type { LuaScript, ScriptText } from "../scripts/script";
import { detectClient } from "./detect";
import { normalizeReply } from "./reply";
import { transportFor } from "./transport";
import type { RedisClient, ScriptArgument, ScriptReply, ScriptTransport } from "./types";

/** Runs the library's Lua scripts on one Redis client, whatever its kind. */
export interface ScriptRunner {
  /** Runs `script`; resolves to its reply as numbers, lists and null. Rejects with the client's error. */
  run(script: LuaScript, keys: string[], args: ScriptArgument[]): Promise<ScriptReply>;
}

/** What the library has learnt about one client's server; shared by every lock on that client. */
interface ClientScripts {
  readonly transport: ScriptTransport;
  /** SHA-1s this process has seen in the server's script cache (sent in full, or run by SHA-1). */
  readonly cached: Set<string>;
  /** Set once the server refused the key-locking shebang: it is not Upstash, whatever was assumed. */
  refusesKeyLocking: boolean;
  /** The runner with plain scripts, and the one with key-locked scripts, made on first use. */
  readonly runners: { plain?: ScriptRunner; keyLocked?: ScriptRunner };
}

// One state per client, shared by every Lock and Debounce on it: applications create many locks
// over one client, and what is learnt about the server (cached scripts, refused flags) holds for all.
const clients = new WeakMap<object, ClientScripts>();

function unusableClient(value: unknown): TypeError {
  return new TypeError(
    `Expected \`redis\` to be a Redis client: @upstash/redis (such as \`Redis.fromEnv()\`), ioredis, node-redis, or an object with an \`eval(script, keys, args)\` method, got ${describeValue(value)}`,
  );
}

/** Throws a TypeError unless `value` looks like a client the lock can drive. */
export function assertEvalClient(value: unknown): asserts value is RedisClient {
  if (detectClient(value) === undefined) throw unusableClient(value);
}

/**
 * The runner for `client`, chosen by its shape.
 *
 * - Each script is sent in full (EVAL) the first time this process runs it on the client, and by
 *   its SHA-1 (EVALSHA) after that: one command either way, never a NOSCRIPT round trip on a cold
 *   start. When Redis answers NOSCRIPT anyway (a restart, a SCRIPT FLUSH, another cluster node), the
 *   script is sent once in full.
 * - With `keyLocking`, scripts carry Upstash's `allow-key-locking` shebang. A server that refuses it
 *   (plain Redis, Valkey, a proxy that forwards scripts as they are) gets the plain script at once,
 *   and every later call on the client is plain: the refusal costs one request, once.
 *
 * @throws {TypeError} when `client` is not a usable Redis client.
 */
export function scriptRunnerFor(client: RedisClient, keyLocking: boolean): ScriptRunner {
  const state = clientScripts(client);
  const slot = keyLocking ? "keyLocked" : "plain";
  state.runners[slot] ??= keyLocking ? keyLockedRunner(state) : plainRunner(state);
  return state.runners[slot];
}

function clientScripts(client: RedisClient): ClientScripts {
  let state = clients.get(client);
  if (state === undefined) {
    const detected = detectClient(client);
    if (detected === undefined) throw unusableClient(client);
    state = { transport: transportFor(detected), cached: new Set(), refusesKeyLocking: false, runners: {} };
    clients.set(client, state);
  }
  return state;
}

function plainRunner(state: ClientScripts): ScriptRunner {
  return { run: async (script, keys, args) => normalizeReply(await send(state, script, keys, args)) };
}

function keyLockedRunner(state: ClientScripts): ScriptRunner {
  return {
    async run(script, keys, args) {
      if (state.refusesKeyLocking) return normalizeReply(await send(state, script, keys, args));
      try {
        return normalizeReply(await send(state, script.keyLocked, keys, args));
      } catch (error) {
        // A refused shebang means the script never ran, so sending it again is safe.
        if (!refusesShebang(error)) throw error;
        state.refusesKeyLocking = true;
        return normalizeReply(await send(state, script, keys, args));
      }
    },
  };
}

async function send(
  state: ClientScripts,
  script: ScriptText,
  keys: string[],
  args: ScriptArgument[],
): Promise<unknown> {
  const { transport, cached } = state;
  if (transport.evalsha === undefined) return transport.eval(script.source, keys, args);
  if (!cached.has(script.sha1)) {
    const reply = await transport.eval(script.source, keys, args);
    cached.add(script.sha1);
    return reply;
  }
  try {
    return await transport.evalsha(script.sha1, keys, args);
  } catch (error) {
    if (!messageMatches(error, /noscript/i)) throw error;
    return transport.eval(script.source, keys, args);
  }
}

/**
 * Redis 7 and Valkey: "ERR Unexpected flag in script shebang: allow-key-locking"; Redis 6 and
 * servers without shebang support fail to compile the first line ("unexpected symbol near '#'").
 */
function refusesShebang(error: unknown): boolean {
  return messageMatches(error, /shebang|near '#'|(unknown|invalid|unexpected) (script )?flag/i);
}

function messageMatches(error: unknown, pattern: RegExp): boolean {
  return error instanceof Error && pattern.test(error.message);
}
