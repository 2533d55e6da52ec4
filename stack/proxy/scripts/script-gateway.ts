import type { Command } from "../../resp/command";
import type { RespReply } from "../../resp/reply";

/**
 * How the proxy treats Lua script flags Redis does not know (Upstash's `allow-key-locking`):
 * - `emulate`: takes the flag out before Redis sees the script, keeps answering to the SHA-1 of the text the
 *   client sent, and checks in Lua that the script touches only keys passed in KEYS;
 * - `accept`: the same without the key check, whose Lua guard costs every flagged script some tens of
 *   microseconds that Upstash's own check does not: for benchmarks, where only speed is compared;
 * - `forward`: passes scripts through untouched, as serverless-redis-http does, so Redis rejects the flag.
 */
export type ScriptFlagsMode = "emulate" | "accept" | "forward";

/** The script-flag modes, for validating options. */
export const SCRIPT_FLAGS_MODES: readonly ScriptFlagsMode[] = ["emulate", "accept", "forward"];

/** Commands ready for Redis, and the way back from Redis's replies to what the client must see. */
export interface PreparedCommands {
  readonly commands: readonly Command[];
  /** Maps Redis's replies, one per command and in order, to the replies the client gets. */
  restore(replies: readonly RespReply[]): RespReply[];
}

/** Rewrites the script commands of a request on their way to Redis (EVAL, EVALSHA, SCRIPT LOAD...). */
export interface ScriptGateway {
  /** @throws RespConnectionError when the rewriting needs Redis and Redis cannot be reached. */
  prepare(commands: readonly Command[]): Promise<PreparedCommands>;
}

/** The `forward` mode: every command and reply unchanged. */
export const forwardScripts: ScriptGateway = {
  prepare: async (commands) => ({ commands, restore: (replies) => [...replies] }),
};
