import { describe, expect, it } from "vitest";
import { check, describeValue } from "../../src/validate";

describe("check", () => {
  it("lets undefined and null through unless the option is required, as 0.2 read them", () => {
    expect(() => check("lease", undefined, "ms")).not.toThrow();
    expect(() => check("lease", null, "ms")).not.toThrow();
    expect(() => check("id", undefined, "text", true)).toThrow(
      new TypeError("Expected `id` to be a string of well-formed Unicode (no lone surrogate), got undefined"),
    );
  });

  it("throws a TypeError for a wrong type and a RangeError for a value out of range, naming both", () => {
    expect(() => check("lease", "10", "ms")).toThrow(
      new TypeError('Expected `lease` to be a positive integer (milliseconds), got "10"'),
    );
    expect(() => check("lease", 1.5, "ms")).toThrow(
      new RangeError("Expected `lease` to be a positive integer (milliseconds), got 1.5"),
    );
  });

  it.each([
    ["ms", 1, 0],
    ["ms0", 0, -1],
    ["delay", 2 ** 31 - 1, 2 ** 31],
    // Review helper-121 (2026-12-05): the message says "at most 2147483647", which 2147483647.5 is not.
    ["delay", 0.5, 2 ** 31 - 0.5],
    ["permits", 3, 0],
    ["fraction", 1, 1.01],
    ["count", Number.POSITIVE_INFINITY, Number.NaN],
    ["id", "a", ""],
    ["text", "", "\uD800"],
  ] as const)("rule %s accepts %s and refuses %s", (rule, good, bad) => {
    expect(() => check("option", good, rule)).not.toThrow();
    expect(() => check("option", bad, rule)).toThrow(RangeError);
  });

  it("takes a list of allowed strings, quoting them in the message", () => {
    expect(() => check("server", "redis", ["upstash", "redis"])).not.toThrow();
    expect(() => check("server", "valkey", ["upstash", "redis"])).toThrow(
      new RangeError('Expected `server` to be "upstash" or "redis", got "valkey"'),
    );
    expect(() => check("server", 1, ["upstash", "redis"])).toThrow(TypeError);
  });

  it("accepts a boolean or an object for a switch, and nothing else", () => {
    expect(() => check("fencing", true, "switch")).not.toThrow();
    expect(() => check("fencing", { clockFloor: true }, "switch")).not.toThrow();
    expect(() => check("fencing", "yes", "switch")).toThrow(
      new TypeError('Expected `fencing` to be a boolean or an object, got "yes"'),
    );
  });

  // Review helper-59 (2026-12-04): an array or null passed the type test, so it read as a RangeError.
  it("takes an array or null where an object is wanted for the wrong type: a TypeError", () => {
    expect(() => check("retry", [], "object")).toThrow(
      new TypeError("Expected `retry` to be an object, got an array"),
    );
    expect(() => check("config", null, "object", true)).toThrow(
      new TypeError("Expected `config` to be an object, got null"),
    );
    expect(() => check("fencing", [], "switch")).toThrow(TypeError);
  });
});

describe("describeValue", () => {
  it("shows what is wrong without an object's contents, which may hold a token", () => {
    expect(describeValue({ token: "secret" })).toBe("an object");
    expect(describeValue(Object.create(null))).toBe("an object");
    expect(describeValue(["secret"])).toBe("an array");
    expect(describeValue(() => "secret")).toBe("a function");
    expect(describeValue(Number.NaN)).toBe("NaN");
    expect(describeValue(null)).toBe("null");
    expect(describeValue(10n)).toBe("10n"); // not "10", which reads as a valid value
  });

  it("points at a lone surrogate instead of printing a string that cannot be encoded", () => {
    expect(describeValue("ab\uDC00")).toBe("a string with a lone surrogate near index 1");
    expect(describeValue("a\uD83D\uDE00")).toBe('"a\uD83D\uDE00"'); // a pair is well-formed
  });
});
