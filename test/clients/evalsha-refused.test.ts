// A server that refuses EVALSHA (review helper-32): renamed away (`rename-command EVALSHA ""`), or denied by
// an ACL. 0.2 sent every script with EVAL, so it worked there; this version sends a script by its SHA-1
// after its first use, and used to throw "unknown command 'evalsha'" (a refusal) from the second use on.
import { Redis as IoRedis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Debounce, Lock } from "../../src/index";
import { type RedisServerHandle, startRedisServer } from "../../stack/redis-server";
import { uniqueId } from "../support/redis";

let renamed: RedisServerHandle; // EVALSHA renamed away
let plain: RedisServerHandle; // for an ACL user denied it
const clients: IoRedis[] = [];

beforeAll(async () => {
  [renamed, plain] = await Promise.all([
    startRedisServer({ extraArgs: ["--rename-command", "EVALSHA", ""] }),
    startRedisServer(),
  ]);
});
afterAll(async () => {
  for (const client of clients) client.disconnect();
  await renamed?.stop();
  await plain?.stop();
});

function connect(server: RedisServerHandle, options: { username?: string; password?: string } = {}): IoRedis {
  const client = new IoRedis(server.port, "127.0.0.1", options);
  client.on("error", () => {});
  clients.push(client);
  return client;
}

describe("a Redis without EVALSHA", () => {
  it("runs a Lock beyond the first use of each script, sending scripts in full", async () => {
    const lock = new Lock({ id: uniqueId("no-evalsha"), redis: connect(renamed) });
    for (let round = 0; round < 3; round++) {
      expect(await lock.acquire()).toBe(true);
      expect(await lock.extend(1_000)).toBe(true);
      expect(await lock.getStatus()).toBe("ACQUIRED");
      expect(await lock.release()).toBe(true);
    }
  });

  it("runs a Debounce's second call", async () => {
    const debounce = new Debounce({
      id: uniqueId("no-evalsha-debounce"),
      redis: connect(renamed),
      wait: 20,
      callback: () => {},
    });
    expect(await debounce.call()).toBe(true);
    expect(await debounce.call()).toBe(true);
  });
});

describe("an ACL user denied EVALSHA", () => {
  it("runs a Lock beyond the first use of each script", async () => {
    await connect(plain).call("ACL", "SETUSER", "eval-only", "on", "nopass", "~*", "&*", "+@all", "-evalsha");
    const lock = new Lock({
      id: uniqueId("acl-no-evalsha"),
      redis: connect(plain, { username: "eval-only", password: "" }),
    });
    expect(await lock.acquire()).toBe(true);
    expect(await lock.release()).toBe(true);
    expect(await lock.acquire()).toBe(true);
    expect(await lock.release()).toBe(true);
  });
});
