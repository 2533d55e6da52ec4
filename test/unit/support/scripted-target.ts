import type { ScriptArgument } from "../../../src/redis/client";
import type { ServerKind } from "../../../src/redis/server";
import type { LuaScript } from "../../../src/scripts/script";
import type { StoreTarget } from "../../../src/store";

/** One script call a store made. */
export interface Sent {
  readonly script: LuaScript;
  readonly keys: string[];
  readonly args: ScriptArgument[];
}

/**
 * A store target on key "k" whose runner stands in for Redis: it answers with `replies` in turn (an Error
 * rejects) and records each call in `sent`. For unit tests of what a store sends and how it reads replies;
 * the scripts themselves run against a real redis-server in the integration tests.
 */
export function scriptedTarget(
  replies: (unknown[] | number | Error)[],
  server: ServerKind = "redis",
): { target: StoreTarget; sent: Sent[] } {
  const sent: Sent[] = [];
  const target: StoreTarget = {
    lockId: "k",
    key: "k",
    channelKey: "k",
    server,
    client: { eval: async () => 0 },
    events: () => undefined,
    run: async (script, keys, args) => {
      sent.push({ script, keys, args });
      const reply = replies.shift();
      if (reply instanceof Error) throw reply;
      return reply as never;
    },
  };
  return { target, sent };
}
