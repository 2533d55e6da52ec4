import { describe, expect, it } from "vitest";
import { assertCommandAllowed } from "../../stack/proxy/forbidden-commands";
import { HttpError } from "../../stack/proxy/http-error";
import { parseCommandList, parseSingleCommand } from "../../stack/proxy/request-commands";

function statusOf(run: () => unknown): number | undefined {
  try {
    run();
    return undefined;
  } catch (error) {
    return error instanceof HttpError ? error.status : -1;
  }
}

describe("parseSingleCommand", () => {
  it("coerces numbers, booleans and null to strings", () => {
    expect(parseSingleCommand(["set", "k", 30000, true, false, null, 1.5, -0])).toEqual([
      "set",
      "k",
      "30000",
      "true",
      "false",
      "null",
      "1.5",
      "0",
    ]);
  });

  it.each([
    ["a non-array body", { command: "get" }],
    ["a string body", "get k"],
    ["an empty command", []],
    ["a nested array", ["set", "k", ["v"]]],
    ["an object argument", ["set", "k", { v: 1 }]],
  ])("rejects %s with 400", (_name, body) => {
    expect(statusOf(() => parseSingleCommand(body))).toBe(400);
  });
});

describe("parseCommandList", () => {
  it("validates every command", () => {
    expect(parseCommandList([["ping"], ["incrby", "k", 2]])).toEqual([["ping"], ["incrby", "k", "2"]]);
    expect(parseCommandList([])).toEqual([]);
    expect(statusOf(() => parseCommandList(["ping"]))).toBe(400);
    expect(statusOf(() => parseCommandList([["ping"], []]))).toBe(400);
  });
});

describe("assertCommandAllowed", () => {
  it.each([
    ["blpop", "k", "0"],
    ["BRPOP", "k", "0"],
    ["bzpopmin", "k", "0"],
    ["blmove", "a", "b", "left", "left", "0"],
    ["multi"],
    ["exec"],
    ["watch", "k"],
    ["select", "1"],
    ["auth", "pw"],
    ["hello", "3"],
    ["subscribe", "ch"],
    ["monitor"],
    ["client", "reply", "off"],
    ["quit"],
    ["wait", "1", "0"],
    ["xread", "BLOCK", "0", "STREAMS", "s", "$"],
    ["xreadgroup", "group", "g", "c", "block", "10", "streams", "s", ">"],
  ])("rejects %s with 400 ERR", (...command) => {
    expect(() => assertCommandAllowed(command)).toThrow(/^ERR command '.+' is not supported/);
    expect(statusOf(() => assertCommandAllowed(command))).toBe(400);
  });

  it.each([
    ["ping"],
    ["echo", "x"],
    ["publish", "ch", "m"],
    ["xread", "count", "1", "streams", "block", "0"],
    ["eval", "return redis.call('blpop', KEYS[1], 0)", "1", "k"],
  ])("allows %s", (...command) => {
    expect(() => assertCommandAllowed(command)).not.toThrow();
  });
});
