import { describe, expect, it } from "vitest";
import { splitKeyLockingShebang } from "../../stack/proxy/scripts/key-locking-shebang";

describe("splitKeyLockingShebang", () => {
  it.each([
    ["the flag alone", "#!lua flags=allow-key-locking\nreturn 1", undefined],
    ["the flag before another", "#!lua flags=allow-key-locking,no-writes\nreturn 1", "#!lua flags=no-writes"],
    ["the flag after another", "#!lua flags=no-writes,allow-key-locking\nreturn 1", "#!lua flags=no-writes"],
    [
      "the flag among others",
      "#!lua flags=no-writes,allow-key-locking,allow-oom\nreturn 1",
      "#!lua flags=no-writes,allow-oom",
    ],
    [
      "the flag in its own option",
      "#!lua flags=allow-key-locking  flags=no-writes\nreturn 1",
      "#!lua flags=no-writes",
    ],
    ["an option Redis will judge", "#!lua name=x flags=allow-key-locking\nreturn 1", "#!lua name=x"],
  ])("takes the flag out of %s", (_name, script, shebang) => {
    expect(splitKeyLockingShebang(script)).toEqual({ shebang, body: "\nreturn 1" });
  });

  it("takes a carriage return before the line feed with the shebang", () => {
    expect(splitKeyLockingShebang("#!lua flags=allow-key-locking\r\nreturn 1")).toEqual({
      shebang: undefined,
      body: "\nreturn 1",
    });
  });

  it.each([
    ["no shebang", "return 1"],
    ["a shebang without the flag", "#!lua flags=no-writes\nreturn 1"],
    ["a flag that only contains the name", "#!lua flags=allow-key-locking2\nreturn 1"],
    ["another engine", "#!js flags=allow-key-locking\nreturn 1"],
    ["a shebang without a line feed (Redis rejects it)", "#!lua flags=allow-key-locking"],
    ["a quoted shebang", '#!lua "flags=allow-key-locking"\nreturn 1'],
    ["the flag below the first line", "return 1\n#!lua flags=allow-key-locking"],
  ])("leaves %s to Redis", (_name, script) => {
    expect(splitKeyLockingShebang(script)).toBeUndefined();
  });
});
