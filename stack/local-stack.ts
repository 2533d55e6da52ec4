import type { ScriptFlagsMode } from "./proxy/scripts/script-gateway";
import { type ProxyHandle, startProxy } from "./proxy/server";
import { type RedisServerHandle, startRedisServer } from "./redis-server";

/** Options of {@link startLocalStack}. */
export interface LocalStackOptions {
  /** Front this Redis instead of starting a throwaway redis-server. */
  readonly redisUrl?: string;
  /**
   * Proxy port; 0 picks a free one.
   * @default 0
   */
  readonly port?: number;
  /**
   * Proxy listen address.
   * @default "127.0.0.1"
   */
  readonly host?: string;
  /**
   * Bearer token.
   * @default a random token
   */
  readonly token?: string;
  /**
   * Largest accepted request body, in bytes.
   * @default 1000000
   */
  readonly maxBodyBytes?: number;
  /**
   * How the proxy treats Upstash's `allow-key-locking` script flag: `"emulate"` it, `"accept"` it without
   * checking keys (for benchmarks), or `"forward"` scripts untouched so Redis rejects the flag (see
   * `ProxyOptions.scriptFlags`).
   * @default "emulate"
   */
  readonly scriptFlags?: ScriptFlagsMode;
}

/** A running local Upstash-compatible stack. */
export interface LocalStack {
  /** For `UPSTASH_REDIS_REST_URL`, e.g. `http://127.0.0.1:40123`. */
  readonly url: string;
  /** For `UPSTASH_REDIS_REST_TOKEN`. */
  readonly token: string;
  /** The Redis behind the proxy. */
  readonly redisUrl: string;
  /** The redis-server this stack started (absent when `redisUrl` was given); tests may stop or restart it. */
  readonly redis?: RedisServerHandle;
  /** The proxy, with its request counters. */
  readonly proxy: ProxyHandle;
  /** Stops the proxy, then the redis-server if this stack started it. Safe to call twice. */
  stop(): Promise<void>;
}

/**
 * Starts a redis-server (unless `redisUrl` is given) and the Upstash REST proxy in front of it.
 *
 * @example
 * const stack = await startLocalStack();
 * const redis = new Redis({ url: stack.url, token: stack.token });
 * await stack.stop();
 */
export async function startLocalStack(options: LocalStackOptions = {}): Promise<LocalStack> {
  const redis = options.redisUrl === undefined ? await startRedisServer() : undefined;
  const redisUrl = options.redisUrl ?? (redis as RedisServerHandle).url;
  let proxy: ProxyHandle;
  try {
    proxy = await startProxy({
      redisUrl,
      ...(options.port === undefined ? {} : { port: options.port }),
      ...(options.host === undefined ? {} : { host: options.host }),
      ...(options.token === undefined ? {} : { token: options.token }),
      ...(options.maxBodyBytes === undefined ? {} : { maxBodyBytes: options.maxBodyBytes }),
      ...(options.scriptFlags === undefined ? {} : { scriptFlags: options.scriptFlags }),
    });
  } catch (error) {
    await redis?.stop();
    throw error;
  }
  let stopping: Promise<void> | undefined;
  return {
    url: proxy.url,
    token: proxy.token,
    redisUrl,
    ...(redis === undefined ? {} : { redis }),
    proxy,
    stop() {
      stopping ??= proxy.close().then(() => redis?.stop());
      return stopping;
    },
  };
}
