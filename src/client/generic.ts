import type { EvalClient } from "./redis-client";
import type { ScriptRunner } from "./script-runner";
import { sendingBySha } from "./send-by-sha";

/**
 * Runs scripts through a client with `eval(script, keys, args)`, such as `@upstash/redis`, whose
 * methods already have this shape. Arguments go through untouched (the HTTP client serialises
 * numbers itself). EVALSHA is used only when the client offers `evalsha` of the same shape.
 */
export function evalClientRunner(client: EvalClient): ScriptRunner {
  const evalsha = client.evalsha;
  return sendingBySha({
    evalsha:
      typeof evalsha === "function"
        ? (sha1, keys, args) => evalsha.call(client, sha1, keys, args)
        : undefined,
    eval: (source, keys, args) => client.eval(source, keys, args),
  });
}
