// The shapes of the clients the lock drives and of the seams between client modules. Types only,
// so every client module can import them without import cycles.

/** A value a script argument may take; numbers are sent as their decimal text. */
export type ScriptArgument = string | number;

/** A script reply as the library reads it; the library's scripts return nothing else. */
export type ScriptReply = number | null | ScriptReply[];

/**
 * The generic client shape: anything with `eval(script, keys, args)` that resolves to the
 * script's reply, such as `@upstash/redis`'s `Redis` (`Redis.fromEnv()`, `new Redis({ url, token })`).
 * When the client also has `evalsha(sha1, keys, args)`, scripts are sent by their SHA-1 after their
 * first use and only fall back to the full text when Redis answers NOSCRIPT.
 */
export interface EvalClient {
  eval(script: string, keys: string[], args: ScriptArgument[]): Promise<unknown>;
  evalsha?(sha1: string, keys: string[], args: ScriptArgument[]): Promise<unknown>;
}

/**
 * The part of an ioredis `Redis` or `Cluster` the lock uses (checked against ioredis 6). Its `eval` and
 * `evalsha` take the key count and then keys and arguments spread, unlike the generic shape.
 */
export interface IoRedisClient {
  /** Set by both ioredis classes; with `defineCommand`, what tells ioredis apart from other clients. */
  readonly isCluster: boolean;
  defineCommand(name: string, definition: { lua: string; numberOfKeys?: number }): void;
  eval(script: string, numkeys: number, ...keysAndArgs: string[]): Promise<unknown>;
  evalsha(sha1: string, numkeys: number, ...keysAndArgs: string[]): Promise<unknown>;
}

/** Keys and arguments as node-redis takes them; it accepts only strings (or buffers). */
export interface NodeRedisScriptOptions {
  keys: string[];
  arguments: string[];
}

/**
 * The part of a node-redis client (`createClient` or `createCluster`; checked against node-redis 6)
 * the lock uses. Since v4 every command exists under its Redis name and in camel case, hence
 * `EVALSHA` and `evalSha`.
 */
export interface NodeRedisClient {
  eval(script: string, options: NodeRedisScriptOptions): Promise<unknown>;
  evalSha(sha1: string, options: NodeRedisScriptOptions): Promise<unknown>;
  EVALSHA(sha1: string, options: NodeRedisScriptOptions): Promise<unknown>;
}

/**
 * Every client the lock accepts, passed as is: `@upstash/redis` or any other {@link EvalClient},
 * an ioredis `Redis` or `Cluster`, or a node-redis client from `createClient` or `createCluster`.
 * The kind is recognised by its shape; no client library is imported.
 */
export type RedisClient = EvalClient | IoRedisClient | NodeRedisClient;

/** A client recognised by its shape, with the kind that says how to call its `eval`. */
export type DetectedClient =
  | { readonly kind: "ioredis"; readonly client: IoRedisClient }
  | { readonly kind: "node-redis"; readonly client: NodeRedisClient }
  | { readonly kind: "eval"; readonly client: EvalClient };

/** Sends a script's text (EVAL) or SHA-1 (EVALSHA) with its keys and arguments; resolves to the raw reply. */
export type SendScript = (scriptOrSha1: string, keys: string[], args: ScriptArgument[]) => Promise<unknown>;

/** How one kind of client sends a script: in full, and by SHA-1 when it can. */
export interface ScriptTransport {
  readonly eval: SendScript;
  readonly evalsha: SendScript | undefined;
}
