import type {
  DetectedClient,
  EvalClient,
  IoRedisClient,
  NodeRedisClient,
  ScriptArgument,
  ScriptTransport,
} from "./types";

/**
 * How to send a script through each kind of client: the three `eval` signatures differ. A cluster
 * client (ioredis `Cluster`, node-redis `createCluster`) routes EVAL and EVALSHA by the slot of the
 * first key, so the same call works on one server and on a cluster.
 */
export function transportFor(detected: DetectedClient): ScriptTransport {
  switch (detected.kind) {
    case "ioredis":
      return ioredisTransport(detected.client);
    case "node-redis":
      return nodeRedisTransport(detected.client);
    case "eval":
      return evalClientTransport(detected.client);
  }
}

/** ioredis: the key count, then keys and arguments spread, all as strings. */
function ioredisTransport(client: IoRedisClient): ScriptTransport {
  const flat = (keys: string[], args: ScriptArgument[]) => [...keys, ...args.map(String)];
  return {
    eval: (source, keys, args) => client.eval(source, keys.length, ...flat(keys, args)),
    evalsha: (sha1, keys, args) => client.evalsha(sha1, keys.length, ...flat(keys, args)),
  };
}

/** node-redis: an options object; it accepts only strings (or buffers). */
function nodeRedisTransport(client: NodeRedisClient): ScriptTransport {
  const options = (keys: string[], args: ScriptArgument[]) => ({ keys, arguments: args.map(String) });
  return {
    eval: (source, keys, args) => client.eval(source, options(keys, args)),
    evalsha: (sha1, keys, args) => client.evalSha(sha1, options(keys, args)),
  };
}

/**
 * Any client with `eval(script, keys, args)`, such as `@upstash/redis`. Arguments go through
 * untouched (the HTTP client serialises numbers itself). EVALSHA is used only when the client
 * offers `evalsha` of the same shape.
 */
function evalClientTransport(client: EvalClient): ScriptTransport {
  const evalsha = client.evalsha;
  return {
    eval: (source, keys, args) => client.eval(source, keys, args),
    evalsha:
      typeof evalsha === "function"
        ? (sha1, keys, args) => evalsha.call(client, sha1, keys, args)
        : undefined,
  };
}
