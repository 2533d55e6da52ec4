import type { LuaScript } from "../scripts/lua-script";
import type { ScriptArgument } from "./redis-client";
import { normalizeReply } from "./reply";
import type { ScriptRunner } from "./script-runner";

type Send = (scriptOrSha1: string, keys: string[], args: ScriptArgument[]) => Promise<unknown>;

/** How one kind of client sends a script: by SHA-1 when it can, and in full. */
export interface ScriptTransport {
  readonly evalsha: Send | undefined;
  readonly eval: Send;
}

function isNoScript(error: unknown): boolean {
  return error instanceof Error && error.message.toLowerCase().includes("noscript");
}

/**
 * A runner that sends each script by its SHA-1, 40 characters instead of the whole script. Redis
 * answers NOSCRIPT after a restart, a SCRIPT FLUSH, or on a cluster node that never saw the
 * script; the script is then sent once in full, which also caches it there for the next call.
 * Every reply is normalised, whatever the client handed back.
 */
export function sendingBySha(transport: ScriptTransport): ScriptRunner {
  const { evalsha } = transport;
  const send = async (script: LuaScript, keys: string[], args: ScriptArgument[]): Promise<unknown> => {
    if (evalsha === undefined) return transport.eval(script.source, keys, args);
    try {
      return await evalsha(script.sha1, keys, args);
    } catch (error) {
      if (!isNoScript(error)) throw error;
      return transport.eval(script.source, keys, args);
    }
  };
  return { run: async (script, keys, args) => normalizeReply(await send(script, keys, args)) };
}
