import { createHash } from "node:crypto";
import { readdirSync, readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { takeWithClockFence } from "../../src/scripts/acquire";
import { allScripts } from "../../src/scripts/all";
import { takePermitWithClockFence } from "../../src/scripts/permits";
import { KEY_LOCKING_SHEBANG } from "../../src/scripts/script";

const sha1 = (text: string) => createHash("sha1").update(text, "utf8").digest("hex");
const byName = allScripts.map((script) => [script.name, script] as const);

describe("script SHA-1 literals", () => {
  it.each(byName)("%s: the plain literal matches its source", (_name, script) => {
    expect(script.sha1).toBe(sha1(script.source));
  });

  it.each(byName)("%s: the key-locked literal matches the source behind the shebang", (_name, script) => {
    expect(script.keyLocked.source).toBe(`${KEY_LOCKING_SHEBANG}${script.source}`);
    expect(script.keyLocked.sha1).toBe(sha1(script.keyLocked.source));
  });

  it("lists every script defined in src/scripts", () => {
    const dir = new URL("../../src/scripts/", import.meta.url);
    const literals = readdirSync(dir)
      .map((file) => readFileSync(new URL(file, dir), "utf8"))
      .flatMap((text) => [...text.matchAll(/ sha1: "([0-9a-f]{40})"/g)].map((match) => match[1]));
    expect(new Set(allScripts.map((script) => script.sha1))).toEqual(new Set(literals));
  });
});

describe("what the scripts may do on Upstash", () => {
  // Upstash asks for deterministic scripts; only the opt-in clock floor reads the clock.
  const clockFloors: unknown[] = [takeWithClockFence, takePermitWithClockFence];
  it.each(byName.filter(([, script]) => !clockFloors.includes(script)))(
    "%s reads no clock and draws no random number",
    (_name, script) => {
      expect(script.source).not.toMatch(/"TIME"|math\.random|redis\.setresp/i);
    },
  );

  // Under allow-key-locking every key must come in KEYS: keys are never built from strings. (The
  // proxy's emulation checks it at run time, in test/lock/server-kind.test.ts.)
  it.each(byName)("%s names keys only through KEYS", (_name, script) => {
    // Locals bound to entries of KEYS, e.g. `local queue, deadlines = KEYS[1], KEYS[2]`.
    const bound = new Set(
      [...script.source.matchAll(/local ([\w, ]+) = (KEYS\[\d\](?:, KEYS\[\d\])*)\n/g)].flatMap(([, names]) =>
        (names ?? "").split(",").map((name) => name.trim()),
      ),
    );
    const calls = [...script.source.matchAll(/redis\.call\("(\w+)", ([^,)]+)/g)];
    for (const [, command, firstArgument = ""] of calls) {
      if (command === "PUBLISH" || command === "TIME") continue;
      if (bound.has(firstArgument)) continue;
      expect(firstArgument, `${command} in ${script.name}`).toMatch(/^KEYS\[(\d|i|slot|released|handed)\]$/);
    }
  });
});
