import { connect } from "node:net";
import { describe, expect, it } from "vitest";
import type { Endpoint } from "./helpers/clients";
import { keyPrefix } from "./helpers/keys";
import { usePrivateStack } from "./helpers/private-stack";
import { fromBase64, type RawResponse, rawRequest } from "./helpers/raw-http";

// Wire-level checks of the proxy itself (status codes, headers, exact JSON text), on a stack of its own so
// they hold even when the suite runs against an external server.
const stack = usePrivateStack();
const endpoint = (): Endpoint => stack();

function expectJsonError(response: RawResponse, status: number, pattern: RegExp): void {
  expect(response.status).toBe(status);
  expect(response.headers.get("content-type")).toBe("application/json");
  expect(response.json).toEqual({ error: expect.stringMatching(pattern) });
}

describe("authentication", () => {
  it("answers 401 JSON to a wrong token, unencoded even with base64 requested", async () => {
    const response = await rawRequest(endpoint(), { token: "wrong", json: ["ping"], base64: true });
    expectJsonError(response, 401, /^Unauthorized$/);
  });

  it.each([
    ["no Authorization header", null],
    ["the client's 'Bearer undefined'", "undefined"],
    ["an empty bearer token", ""],
  ])("answers 401 JSON to %s", async (_name, token) => {
    expectJsonError(await rawRequest(endpoint(), { token, json: ["ping"] }), 401, /^Unauthorized$/);
  });

  it("accepts the token as ?_token= and a lowercase bearer scheme", async () => {
    const { token, url } = endpoint();
    const query = await rawRequest(
      { url, token },
      { token: null, path: `/?_token=${token}`, json: ["ping"] },
    );
    expect(query.json).toEqual({ result: "PONG" });
    const lowercase = await rawRequest(endpoint(), {
      token: null,
      headers: { authorization: `bearer ${token}` },
      json: ["ping"],
    });
    expect(lowercase.json).toEqual({ result: "PONG" });
  });
});

describe("routes and methods", () => {
  it.each(["/nope", "/pipeline/extra", "/subscribe/", "/psubscribe/", "//pipeline"])(
    "answers 404 JSON on %s",
    async (path) => {
      expectJsonError(await rawRequest(endpoint(), { path, json: ["ping"] }), 404, /^ERR endpoint not found/);
    },
  );

  it.each(["DELETE", "PATCH", "OPTIONS"])("answers 405 JSON to %s, with Allow", async (method) => {
    const response = await rawRequest(endpoint(), { method, json: ["ping"] });
    expectJsonError(response, 405, /^ERR method/);
    expect(response.headers.get("allow")).toBe("HEAD, GET, POST, PUT");
  });

  it("accepts PUT and a path with a trailing slash", async () => {
    expect((await rawRequest(endpoint(), { method: "PUT", json: ["ping"] })).json).toEqual({
      result: "PONG",
    });
    expect((await rawRequest(endpoint(), { path: "/pipeline/", json: [["ping"]] })).json).toEqual([
      { result: "PONG" },
    ]);
  });

  it("answers a malformed HTTP request with JSON", async () => {
    const { port } = stack().proxy;
    const reply = await new Promise<string>((resolve, reject) => {
      const socket = connect(port, "127.0.0.1", () => socket.write("NOT HTTP AT ALL\r\n\r\n"));
      let text = "";
      socket.on("data", (chunk) => {
        text += chunk.toString();
      });
      socket.on("end", () => resolve(text));
      socket.on("error", reject);
    });
    expect(reply).toMatch(/^HTTP\/1\.1 400/);
    expect(reply).toContain("Content-Type: application/json");
    expect(reply).toContain('{"error":"ERR malformed HTTP request');
  });
});

describe("request bodies", () => {
  it.each([
    ["no Content-Type", {}],
    ["a charset", { "content-type": "application/json; charset=utf-8" }],
    ["text/plain", { "content-type": "text/plain" }],
  ])("is lenient about the Content-Type: %s", async (_name, headers) => {
    const response = await rawRequest(endpoint(), { headers, json: ["echo", "hi"] });
    expect(response.json).toEqual({ result: "hi" });
  });

  it("coerces numbers, booleans and null to strings", async () => {
    const key = keyPrefix("coerce");
    const response = await rawRequest(endpoint(), {
      path: "/pipeline",
      json: [
        ["set", `${key}n`, 42.5],
        ["set", `${key}b`, true],
        ["set", `${key}z`, null],
        ["mget", `${key}n`, `${key}b`, `${key}z`],
        ["set", `${key}px`, "v", "px", 30000],
        ["pttl", `${key}px`],
      ],
    });
    const entries = response.json as { result: unknown }[];
    expect(entries[3]).toEqual({ result: ["42.5", "true", "null"] });
    expect(entries[5]?.result).toBeGreaterThan(0);
  });

  it.each([
    ["invalid JSON", '["ping"', /^ERR invalid JSON body/],
    ["an empty body", "", /^ERR empty request body/],
    ["a non-array body", '{"command":"ping"}', /^ERR invalid the command/],
    ["an empty command", "[]", /empty/],
    ["a nested array argument", '["set","k",["v"]]', /array or object/],
    ["an object argument", '["set","k",{"v":1}]', /array or object/],
  ])("answers 400 JSON to %s", async (_name, body, pattern) => {
    expectJsonError(await rawRequest(endpoint(), { body }), 400, pattern);
  });

  it("answers 400 JSON to a pipeline entry that is not a command", async () => {
    expectJsonError(
      await rawRequest(endpoint(), { path: "/pipeline", json: [["ping"], "ping"] }),
      400,
      /command 2/,
    );
  });
});

describe("rejected commands", () => {
  it.each([
    [["blpop", "k", 0]],
    [["brpoplpush", "a", "b", 0]],
    [["bzpopmax", "k", 0]],
    [["xread", "block", 0, "streams", "s", "$"]],
    [["multi"]],
    [["watch", "k"]],
    [["select", 1]],
    [["subscribe", "ch"]],
    [["client", "setname", "x"]],
    [["auth", "x"]],
    [["spublish", "ch", "x"]],
  ])("rejects %j with 400 ERR", async (command) => {
    expectJsonError(await rawRequest(endpoint(), { json: command }), 400, /^ERR command/);
  });

  it("discards a transaction holding one whole, before running any of it (§2.3)", async () => {
    const key = keyPrefix("rejected");
    const response = await rawRequest(endpoint(), {
      path: "/multi-exec",
      json: [
        ["set", key, "ran"],
        ["blpop", key, 0],
      ],
    });
    expectJsonError(response, 400, /^ERR command 'blpop'/);
    expect((await rawRequest(endpoint(), { json: ["exists", key] })).json).toEqual({ result: 0 });
  });

  it("answers a pipeline holding one with 200, an error entry in its place, the others run (§2.2)", async () => {
    const key = keyPrefix("pipelined");
    const response = await rawRequest(endpoint(), {
      path: "/pipeline",
      json: [
        ["set", key, "ran"],
        ["blpop", key, 0],
        ["spublish", "ch", "x"],
        ["get", key],
      ],
    });
    expect(response.status).toBe(200);
    expect(response.json).toEqual([
      { result: "OK" },
      { error: expect.stringMatching(/^ERR command 'blpop'/) },
      { error: expect.stringMatching(/^ERR command 'spublish'.*only PUBLISH and PUBSUB/) },
      { result: "ran" },
    ]);
  });
});

describe("response encoding", () => {
  it("base64-encodes status replies and bulk strings, but not integers or nil", async () => {
    const key = keyPrefix("b64");
    const response = await rawRequest(endpoint(), {
      path: "/pipeline",
      base64: true,
      json: [["set", key, "bar"], ["ping"], ["get", key], ["strlen", key], ["get", `${key}missing`]],
    });
    expect(response.json).toEqual([
      { result: "T0s=" },
      { result: "UE9ORw==" },
      { result: "YmFy" },
      { result: 3 },
      { result: null },
    ]);
  });

  it("encodes every string in nested EVAL replies, status replies included", async () => {
    const script = "return {1, 'a', {2, 'b', false, redis.status_reply('QUEUED')}, redis.status_reply('OK')}";
    const response = await rawRequest(endpoint(), { base64: true, json: ["eval", script, 0] });
    expect(response.json).toEqual({ result: [1, "YQ==", [2, "Yg==", null, "UVVFVUVE"], "T0s="] });
  });

  it("returns exact bytes in base64 and U+FFFD for invalid UTF-8 in plain mode", async () => {
    const key = keyPrefix("bytes");
    const bytes = [0, 255, 254, 128, 13, 10, 97];
    await rawRequest(endpoint(), {
      json: ["eval", `return redis.call('set', KEYS[1], string.char(${bytes.join(",")}))`, 1, key],
    });
    const encoded = await rawRequest(endpoint(), { base64: true, json: ["get", key] });
    expect([...fromBase64((encoded.json as { result: unknown }).result)]).toEqual(bytes);
    const plain = await rawRequest(endpoint(), { json: ["get", key] });
    expect(plain.json).toEqual({ result: "\u0000\uFFFD\uFFFD\uFFFD\r\na" });
  });

  it("renders an error nested in a script reply as its message string", async () => {
    const key = keyPrefix("nested-error");
    const script = "redis.call('set', KEYS[1], 'x') return {1, redis.pcall('incr', KEYS[1])}";
    const response = await rawRequest(endpoint(), { json: ["eval", script, 1, key] });
    expect(response.json).toEqual({ result: [1, expect.stringMatching(/^ERR value is not an integer/)] });
  });

  it("writes integers beyond 2^53 exactly", async () => {
    const key = keyPrefix("bigint");
    await rawRequest(endpoint(), { json: ["set", key, "9223372036854775806"] });
    const single = await rawRequest(endpoint(), { base64: true, json: ["incr", key] });
    expect(single.text).toBe('{"result":9223372036854775807}');
    const pipeline = await rawRequest(endpoint(), { path: "/pipeline", json: [["decrby", key, 2 ** 53]] });
    expect(pipeline.text).toBe(`[{"result":${9223372036854775807n - 2n ** 53n}}]`);
  });
});

describe("errors", () => {
  it("answers a single-command Redis error with 400 and the text unchanged", async () => {
    const key = keyPrefix("wrongtype");
    await rawRequest(endpoint(), { json: ["lpush", key, "a"] });
    const wrongType = await rawRequest(endpoint(), { base64: true, json: ["get", key] });
    expect(wrongType.status).toBe(400);
    expect(wrongType.json).toEqual({
      error: "WRONGTYPE Operation against a key holding the wrong kind of value",
    });
    const noScript = await rawRequest(endpoint(), { json: ["evalsha", "0".repeat(40), 0] });
    expect(noScript.status).toBe(400);
    expect(noScript.json).toEqual({ error: "NOSCRIPT No matching script. Please use EVAL." });
  });

  it("answers a pipeline with 200 and an error entry without a result key", async () => {
    const key = keyPrefix("pipeline-error");
    const response = await rawRequest(endpoint(), {
      path: "/pipeline",
      base64: true,
      json: [
        ["set", key, "v"],
        ["incr", key],
        ["get", key],
      ],
    });
    expect(response.status).toBe(200);
    expect(response.text).toBe(
      '[{"result":"T0s="},{"error":"ERR value is not an integer or out of range"},{"result":"dg=="}]',
    );
  });

  it("maps EXECABORT to 400 and runtime errors inside EXEC to entries", async () => {
    const key = keyPrefix("tx");
    const aborted = await rawRequest(endpoint(), {
      path: "/multi-exec",
      json: [["set", key, "1"], ["nosuchcommand"]],
    });
    expectJsonError(aborted, 400, /^EXECABORT Transaction discarded/);
    expect((await rawRequest(endpoint(), { json: ["exists", key] })).json).toEqual({ result: 0 });
    const runtime = await rawRequest(endpoint(), {
      path: "/multi-exec",
      base64: true,
      json: [
        ["set", key, "a"],
        ["incr", key],
        ["get", key],
        ["get", `${key}missing`],
      ],
    });
    expect(runtime.status).toBe(200);
    expect(runtime.text).toBe(
      '[{"result":"T0s="},{"error":"ERR value is not an integer or out of range"},{"result":"YQ=="},{"result":null}]',
    );
  });

  it("answers an empty pipeline or transaction with an empty array", async () => {
    expect((await rawRequest(endpoint(), { path: "/pipeline", json: [] })).json).toEqual([]);
    expect((await rawRequest(endpoint(), { path: "/multi-exec", json: [] })).json).toEqual([]);
  });
});

describe("headers and counters", () => {
  it("sends a different upstash-sync-token on every response, errors included", async () => {
    const tokens = [];
    for (const token of [endpoint().token, "wrong"]) {
      for (let index = 0; index < 3; index += 1) {
        const response = await rawRequest(endpoint(), { token, json: ["ping"] });
        tokens.push(response.headers.get("upstash-sync-token"));
      }
    }
    expect(tokens.every((token) => typeof token === "string" && token.length > 0)).toBe(true);
    expect(new Set(tokens).size).toBe(tokens.length);
  });

  it("counts requests, request bytes and commands", async () => {
    const { stats } = stack().proxy;
    const before = { ...stats };
    const single = '["ping"]';
    const pipeline = '[["ping"],["echo","x"]]';
    await rawRequest(endpoint(), { body: single });
    await rawRequest(endpoint(), { path: "/pipeline", body: pipeline });
    await rawRequest(endpoint(), { token: "wrong", body: single });
    // Other tests in this file run sequentially, so the deltas are exactly ours.
    expect(stats.requests - before.requests).toBe(3);
    expect(stats.requestBytes - before.requestBytes).toBe(single.length + pipeline.length);
    expect(stats.commands - before.commands).toBe(3);
  });
});
