import { afterAll, describe, expect, it } from "vitest";
import { commandAccess } from "../../stack/proxy/scripts/command-access";
import { RespConnection } from "../../stack/resp/connection";
import { connectionOptionsFromUrl } from "../../stack/resp/redis-url";
import { RespInteger, type RespReply, RespStatus } from "../../stack/resp/reply";
import { usePrivateStack } from "./helpers/private-stack";

// How COMMAND INFO entries turn into what the allow-key-locking guard checks: live from the stack's
// redis-server (Redis 7 key specs), and from hand-made Redis 6 entries (first/last/step only).
const stack = usePrivateStack();
let connection: RespConnection | undefined;
afterAll(() => connection?.close());

async function liveAccess(name: string) {
  connection ??= new RespConnection(connectionOptionsFromUrl(stack().redisUrl));
  const [info = null] = (await connection.call("COMMAND", "INFO", name)) as RespReply[];
  return commandAccess(info);
}

/** A Redis 6 COMMAND INFO entry: no tips, key specs or subcommands. */
function redis6Entry(
  name: string,
  flags: string[],
  first: number,
  last: number,
  step: number,
  categories: string[],
) {
  const statuses = (words: string[]) => words.map((word) => new RespStatus(word));
  const integer = (value: number) => new RespInteger(String(value));
  return [
    Buffer.from(name),
    integer(-1),
    statuses(flags),
    integer(first),
    integer(last),
    integer(step),
    statuses(categories),
  ];
}

describe("commandAccess", () => {
  it("reads Redis 7 key specs, movable keys included", async () => {
    expect(await liveAccess("get")).toEqual({
      kind: "keys",
      specs: [{ begin: { index: 1 }, find: { lastKey: 0, keyStep: 1, limit: 0 } }],
    });
    expect(await liveAccess("xread")).toEqual({
      kind: "keys",
      specs: [{ begin: { keyword: "streams", startFrom: 1 }, find: { lastKey: -1, keyStep: 1, limit: 2 } }],
    });
    expect(await liveAccess("lmpop")).toEqual({
      kind: "keys",
      specs: [{ begin: { index: 1 }, find: { keyNumIndex: 0, firstKey: 1, keyStep: 1 } }],
    });
  });

  it("tells database-wide, opaque, keyless and script-refused commands apart", async () => {
    for (const name of [
      "flushdb",
      "flushall",
      "keys",
      "scan",
      "randomkey",
      "dbsize",
      "swapdb",
      "select",
      "info",
    ]) {
      expect(await liveAccess(name)).toEqual({ kind: "database" });
    }
    for (const name of ["sort", "sort_ro", "migrate"]) {
      expect(await liveAccess(name)).toEqual({ kind: "opaque" });
    }
    for (const name of ["publish", "spublish", "time", "ping", "echo"]) {
      expect(await liveAccess(name)).toEqual({ kind: "keys", specs: [] });
    }
    for (const name of ["eval", "subscribe", "multi"]) {
      expect(await liveAccess(name)).toEqual({ kind: "refused-by-redis" });
    }
    expect(await liveAccess("no-such-command")).toBeUndefined();
  });

  it("reads a container by subcommand", async () => {
    const access = await liveAccess("object");
    expect(access?.kind).toBe("container");
    const subcommands = access?.kind === "container" ? access.subcommands : new Map();
    expect(subcommands.get("encoding")).toEqual({
      kind: "keys",
      specs: [{ begin: { index: 2 }, find: { lastKey: 0, keyStep: 1, limit: 0 } }],
    });
  });

  it("falls back to first/last/step without key specs, and gives up on movable keys", () => {
    expect(commandAccess(redis6Entry("mset", ["write"], 1, -1, 2, ["@write"]))).toEqual({
      kind: "keys",
      specs: [{ begin: { index: 1 }, find: { lastKey: -1, keyStep: 2, limit: 0 } }],
    });
    expect(commandAccess(redis6Entry("rename", ["write"], 1, 2, 1, ["@write"]))).toEqual({
      kind: "keys",
      specs: [{ begin: { index: 1 }, find: { lastKey: 1, keyStep: 1, limit: 0 } }],
    });
    expect(commandAccess(redis6Entry("zunionstore", ["write", "movablekeys"], 0, 0, 0, ["@write"]))).toEqual({
      kind: "opaque",
    });
    expect(commandAccess(redis6Entry("flushdb", ["write"], 0, 0, 0, ["@keyspace"]))).toEqual({
      kind: "database",
    });
    expect(commandAccess(redis6Entry("time", ["fast"], 0, 0, 0, ["@fast"]))).toEqual({
      kind: "keys",
      specs: [],
    });
  });
});
