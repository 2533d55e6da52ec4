import type { LuaScript, ScriptText } from "../scripts/script";
import { describeValue } from "../validate";
import { isClientTimeout, summarize } from "./failure";
import { readReply, type ScriptReply } from "./reply";

/** A value a script argument may take; numbers are sent as their decimal text. */
export type ScriptArgument = string | number;

/**
 * Anything with `eval(script, keys, args)` resolving to the script's reply, as `@upstash/redis`'s `Redis`.
 * With `evalsha(sha1, keys, args)` too, scripts go by SHA-1 after their first use.
 */
export interface EvalClient {
  eval(script: string, keys: string[], args: ScriptArgument[]): Promise<unknown>;
  evalsha?(sha1: string, keys: string[], args: ScriptArgument[]): Promise<unknown>;
}

/** The part of an ioredis `Redis` or `Cluster` the lock uses: key count, then keys and arguments spread. */
export interface IoRedisClient {
  /** With `defineCommand`, what tells ioredis apart from other clients. */
  readonly isCluster: boolean;
  defineCommand(name: string, definition: { lua: string; numberOfKeys?: number }): void;
  eval(script: string, numberOfKeys: number, ...keysAndArgs: string[]): Promise<unknown>;
  evalsha(sha1: string, numberOfKeys: number, ...keysAndArgs: string[]): Promise<unknown>;
}

type NodeRedisScriptOptions = { keys: string[]; arguments: string[] };

/** The part of a node-redis client (`createClient`, `createCluster`) the lock uses. */
export interface NodeRedisClient {
  eval(script: string, options: NodeRedisScriptOptions): Promise<unknown>;
  evalSha(sha1: string, options: NodeRedisScriptOptions): Promise<unknown>;
  EVALSHA(sha1: string, options: NodeRedisScriptOptions): Promise<unknown>;
}

/**
 * Every client the lock accepts, passed as is and recognised by shape (no client library is imported):
 * `@upstash/redis` or any other {@link EvalClient}, an ioredis `Redis` or `Cluster`, or node-redis.
 */
export type RedisClient = EvalClient | IoRedisClient | NodeRedisClient;

/** The three ways to call `eval`, told apart by shape: ioredis, node-redis, and every other client. */
type ClientKind = "ioredis" | "node-redis" | "eval";

const has = (value: object, name: string) => typeof (value as Record<string, unknown>)[name] === "function";

/**
 * ioredis has a boolean `isCluster` and `defineCommand`; node-redis spells EVALSHA both `EVALSHA` and
 * `evalSha`; anything else with `eval` is generic. Undefined when `value` has no usable `eval`.
 */
export function clientKind(value: unknown): ClientKind | undefined {
  if (typeof value !== "object" || value === null || !has(value, "eval")) return undefined;
  if (typeof (value as { isCluster?: unknown }).isCluster === "boolean" && has(value, "defineCommand")) {
    return "ioredis";
  }
  return has(value, "evalSha") && has(value, "EVALSHA") ? "node-redis" : "eval";
}

/** ioredis's `keyPrefix`, which it prepends to every key of a command: "" for other clients, or none set. */
export function keyPrefixOf(client: RedisClient): string {
  const prefix = (client as { options?: { keyPrefix?: unknown } }).options?.keyPrefix;
  return clientKind(client) === "ioredis" && typeof prefix === "string" ? prefix : "";
}

export function assertRedisClient(name: string, value: unknown): asserts value is RedisClient {
  if (clientKind(value) === undefined) {
    throw new TypeError(
      `Expected \`${name}\` to be a Redis client (@upstash/redis, ioredis, node-redis, or one with \`eval(script, keys, args)\`), got ${describeValue(value)}`,
    );
  }
}

type Send = (scriptOrSha1: string, keys: string[], args: ScriptArgument[]) => Promise<unknown>;

/** How one kind of client sends a script in full, and by SHA-1 when it can. */
function transport(client: RedisClient): [evaluate: Send, evalsha: Send | undefined] {
  const kind = clientKind(client);
  if (kind === "eval") {
    // Arguments untouched: the HTTP client serialises numbers. Bound, not wrapped: one call less.
    const { eval: evaluate, evalsha } = client as EvalClient;
    return [evaluate.bind(client), evalsha?.bind(client)];
  }
  const io = kind === "ioredis" && (client as IoRedisClient);
  const node = client as NodeRedisClient;
  const status = () => (client as { status?: unknown }).status;
  /**
   * An ioredis timeout while it was not connected, from the command's send to its failure (it waited in the
   * offline queue): Redis was not reached, whatever the message says ("Command timed out"), so it is re-thrown
   * as such, its cause the original. Not node-redis's: it writes its offline queue with the handshake, before
   * it is ready, and a socket timeout makes it not ready before it fails the commands it sent.
   */
  const offline = (sentReady: boolean) => (error: unknown) => {
    if (sentReady || status() === "ready" || !isClientTimeout(error)) throw error;
    throw new Error("the client is not connected (the command timed out waiting for a connection)", {
      cause: error,
    });
  };
  // ioredis: the key count, then keys and arguments spread; node-redis: keys and arguments as options.
  const via =
    (ioredis: "eval" | "evalsha", nodeRedis: "eval" | "evalSha"): Send =>
    (text, keys, args) => {
      if (!io) return node[nodeRedis](text, { keys, arguments: args.map(String) });
      const sentReady = status() === "ready"; // read before the send, which queues the command
      return io[ioredis](text, keys.length, ...keys, ...args.map(String)).catch(offline(sentReady));
    };
  return [via("eval", "eval"), via("evalsha", "evalSha")];
}

/** Runs the library's scripts on one client; resolves to the reply as numbers, lists and null. */
export type ScriptRunner = (
  script: LuaScript,
  keys: string[],
  args: ScriptArgument[],
) => Promise<ScriptReply>;

/** A client's runners, plain or key-locked, sharing what the library learnt about its server. */
type RunnerFor = (keyLocking: boolean) => ScriptRunner;

/** Each client's runners, shared by every lock on that client. */
const runners = new WeakMap<object, RunnerFor>();

/**
 * Each script is sent in full (EVAL) the first time this process runs it on `client`, then by SHA-1
 * (EVALSHA), so a cold start pays no NOSCRIPT round trip; a NOSCRIPT anyway (a restart, a flush, another
 * cluster node) resends it in full, and calls started until that resend lands send the text at once. With
 * `keyLocking`, scripts carry Upstash's `allow-key-locking` shebang; a server refusing it gets the plain
 * script at once, as does every later call on the client.
 */
export function scriptRunnerFor(client: RedisClient, keyLocking: boolean): ScriptRunner {
  const runnerFor = runners.get(client) ?? clientRunners(client);
  runners.set(client, runnerFor);
  return runnerFor(keyLocking);
}

function clientRunners(client: RedisClient): RunnerFor {
  // Undefined once EVALSHA was renamed away or denied by an ACL: every script goes in full, as 0.2 sent them.
  let [evaluate, evalsha] = transport(client);
  const cached = new Map<ScriptText, string>(); // scripts seen in the server's script cache, with their SHA-1s
  let refusesKeyLocking = false; // the server refused the key-locking shebang: not Upstash, whatever was assumed

  const send = async (script: ScriptText, keys: string[], args: ScriptArgument[]) => {
    if (evalsha === undefined) return evaluate(script.source, keys, args);
    const known = cached.get(script);
    if (known === undefined) {
      // The first use sends the text, while its SHA-1 is computed for the calls after it.
      const [reply, sha1] = await Promise.all([evaluate(script.source, keys, args), script.sha1()]);
      if (sha1) cached.set(script, sha1);
      return reply;
    }
    try {
      return await evalsha(known, keys, args);
    } catch (error) {
      // Refused before it ran: the script is not cached there, or the server takes no EVALSHA at all.
      // Matched anywhere (clients prefix "Command failed: "), on the refused command's name only: a NOPERM on
      // a key quotes the command too ("command was: [evalsha, ...]") and says nothing of EVALSHA itself.
      const refusesEvalsha = matches(error, /(unknown command|permissions to run the) [`'"]?evalsha\b/i);
      if (!refusesEvalsha && !matches(error, /noscript/i)) throw error;
      if (refusesEvalsha) evalsha = undefined;
      // Calls from now until the text lands send it too: a SHA-1 would only meet NOSCRIPT again.
      cached.delete(script);
      const reply = await evaluate(script.source, keys, args);
      cached.set(script, known);
      return reply;
    }
  };

  return (keyLocking) => async (script, keys, args) => {
    if (!keyLocking || refusesKeyLocking) return readReply(await send(script, keys, args));
    try {
      return readReply(await send(script.keyLocked, keys, args));
    } catch (error) {
      // Refused, the script never ran: resend it. Redis 7 and Valkey name the flag; Redis 6 says "near '#'".
      if (!matches(error, /shebang|near '#'|(unknown|invalid|unexpected) (script )?flag/i)) throw error;
      refusesKeyLocking = true;
      return readReply(await send(script, keys, args));
    }
  };
}

/** Matched on what Redis said only: a client's message quotes the command too, whose keys may hold anything. */
function matches(error: unknown, pattern: RegExp): boolean {
  return error instanceof Error && pattern.test(summarize(error));
}
