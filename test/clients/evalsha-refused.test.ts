// A server that refuses EVALSHA (review helper-32): renamed away (`rename-command EVALSHA ""`), or denied by
// an ACL. 0.2 sent every script with EVAL, so it worked there; this version sends a script by its SHA-1
// after its first use, and used to throw "unknown command 'evalsha'" (a refusal) from the second use on.
import { Redis as UpstashRedis } from "@upstash/redis";
import type { Redis as IoRedis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Debounce, Lock } from "../../src/index";
import { type LocalStack, startLocalStack } from "../../stack/local-stack";
import { type OwnServer, useRedisServer } from "../support/own-server";
import { uniqueId } from "../support/redis";

const renamed = useRedisServer({ extraArgs: ["--rename-command", "EVALSHA", ""] }); // EVALSHA renamed away
const plain = useRedisServer(); // for an ACL user denied it

function connect(server: OwnServer, options: { username?: string; password?: string } = {}): IoRedis {
  return server.connect(options).on("error", () => {});
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

describe("@upstash/redis through the REST proxy, logged in as a user denied EVALSHA", () => {
  let stack: LocalStack;
  beforeAll(async () => {
    await connect(plain).call(
      "ACL",
      "SETUSER",
      "rest-no-evalsha",
      "on",
      ">pw",
      "~*",
      "&*",
      "+@all",
      "-evalsha",
    );
    stack = await startLocalStack({
      redisUrl: `redis://rest-no-evalsha:pw@127.0.0.1:${plain.server().port}`,
    });
  });
  afterAll(() => stack?.stop());

  // Review helper-33: auto-pipelined, the client's errors start "Command failed: ", which the check missed.
  it.each([
    ["auto-pipelining on (the default)", {}],
    ["auto-pipelining off", { enableAutoPipelining: false }],
  ])("runs a Lock beyond the first use of each script: %s", async (_name, options) => {
    const redis = new UpstashRedis({
      url: stack.url,
      token: stack.token,
      enableTelemetry: false,
      ...options,
    });
    const lock = new Lock({ id: uniqueId("rest-no-evalsha"), redis });
    for (let round = 0; round < 2; round++) {
      expect(await lock.acquire()).toBe(true);
      expect(await lock.release()).toBe(true);
    }
  });
});

describe("a NOPERM on a key, from a server that takes EVALSHA", () => {
  let stack: LocalStack;
  beforeAll(async () => {
    await connect(plain).call("ACL", "SETUSER", "some-keys", "on", ">pw", "~ok:*", "~{ok:*", "&*", "+@all");
    stack = await startLocalStack({ redisUrl: `redis://some-keys:pw@127.0.0.1:${plain.server().port}` });
  });
  afterAll(() => stack?.stop());

  it("keeps sending scripts by SHA-1 for the client's other locks", async () => {
    // Review helper-33: @upstash/redis quotes the command in its error ("command was: [\"evalsha\", ...]"),
    // which read as EVALSHA refused, and the whole client sent every script in full from then on.
    const admin = connect(plain);
    const client = new UpstashRedis({
      url: stack.url,
      token: stack.token,
      enableTelemetry: false,
      enableAutoPipelining: false,
    });
    const allowed = new Lock({ id: `ok:${uniqueId("keyed")}`, redis: client });
    expect(await allowed.acquire()).toBe(true); // first use: EVAL
    expect(await allowed.release()).toBe(true);
    const denied = new Lock({ id: `no:${uniqueId("keyed")}`, redis: client, retry: { attempts: 1 } });
    expect(await allowed.acquire()).toBe(true); // EVALSHA from now on
    await expect(denied.acquire()).rejects.toMatchObject({ refused: true });
    const stats = async () => {
      const info = String(await admin.info("commandstats"));
      const calls = (name: string) => Number(new RegExp(`cmdstat_${name}:calls=(\\d+)`).exec(info)?.[1] ?? 0);
      return { eval: calls("eval"), evalsha: calls("evalsha") };
    };
    const before = await stats();
    expect(await allowed.release()).toBe(true);
    const after = await stats();
    expect({ eval: after.eval - before.eval, evalsha: after.evalsha - before.evalsha }).toEqual({
      eval: 0,
      evalsha: 1,
    });
  });
});
