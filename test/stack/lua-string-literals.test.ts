import { describe, expect, it } from "vitest";
import { luaStringLiterals } from "../../stack/proxy/scripts/lua-string-literals";

describe("luaStringLiterals", () => {
  it("finds single-quoted, double-quoted and long strings, in order", () => {
    const source = `redis.call('GET', KEYS[1])\nredis.call("set", KEYS[1], [[v]])\nlocal s = [==[a]]b]==]`;
    expect(luaStringLiterals(source)).toEqual(["GET", "set", "v", "a]]b"]);
  });

  it("skips line and long comments, so a quote inside them opens nothing", () => {
    const source = `-- don't call 'flushdb'\n--[[ "keys" ]] --[==[ 'scan' ]==]\nreturn redis.call('TIME')`;
    expect(luaStringLiterals(source)).toEqual(["TIME"]);
  });

  it("keeps quotes of the other kind and skips strings with escapes", () => {
    expect(luaStringLiterals(`return {"it's", 'say "hi"', "g\\101t", 'a\\'b', 'ok'}`)).toEqual([
      "it's",
      'say "hi"',
      "ok",
    ]);
  });

  it("drops the line feed that opens a long string, and does not read brackets as strings", () => {
    expect(luaStringLiterals("local t = {}\nt[1] = [[\nline]]\nreturn t[ 1 ]")).toEqual(["line"]);
  });

  it("stops an unterminated string at the end of its line", () => {
    expect(luaStringLiterals("local a = 'open\nlocal b = 'closed'")).toEqual(["open", "closed"]);
  });
});
