import { readdirSync, readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { KEY_LOCKING_SHEBANG } from "../../../src/scripts/script";
import { allScripts, sha1 } from "../../support/scripts";

const byName = Object.entries(allScripts);

describe("script definitions", () => {
  it.each(byName)("%s: each form's SHA-1 is that of the text sent", async (_name, script) => {
    expect(await script.sha1()).toBe(sha1(script.source));
    expect(script.keyLocked.source).toBe(`${KEY_LOCKING_SHEBANG}${script.source}`);
    expect(await script.keyLocked.sha1()).toBe(sha1(script.keyLocked.source));
  });

  it("the list holds every script defined in src", () => {
    const files = ["scripts/lock.ts", "scripts/debounce.ts", "permits/scripts.ts"];
    const defined = files.flatMap((file) =>
      [
        ...readFileSync(new URL(`../../../src/${file}`, import.meta.url), "utf8").matchAll(
          /export const (\w+) = (?:\/\* @__PURE__ \*\/ )?defineScript/g,
        ),
      ].map((match) => match[1]),
    );
    expect(new Set(Object.keys(allScripts))).toEqual(new Set(defined));
    const elsewhere = readdirSync(new URL("../../../src/", import.meta.url), {
      recursive: true,
      encoding: "utf8",
    })
      .filter((file) => file.endsWith(".ts") && !files.includes(file) && file !== "scripts/script.ts")
      .filter((file) =>
        readFileSync(new URL(`../../../src/${file}`, import.meta.url), "utf8").includes("defineScript("),
      );
    expect(elsewhere).toEqual([]);
  });
});

describe("what the scripts may do on Upstash", () => {
  // Upstash asks for deterministic scripts; only the opt-in clock floor reads the clock.
  it.each(byName)(
    "%s reads the clock only for the clock floor, and draws no random number",
    (name, script) => {
      expect(script.source).not.toMatch(/math\.random|redis\.setresp/i);
      if (name !== "takeLockClockFence" && name !== "takePermit") expect(script.source).not.toMatch(/"TIME"/);
      if (name === "takePermit")
        expect(script.source).toMatch(/ARGV\[11\] == "clock" then\s+local clock = redis\.call\("TIME"\)/);
    },
  );

  // Under allow-key-locking every key must come in KEYS: keys are never built from strings. (The
  // proxy's emulation checks it at run time, in test/lock/server-kind.test.ts.)
  it.each(byName)("%s names keys only through KEYS", (_name, script) => {
    // Locals bound to entries of KEYS, e.g. `local queue, places, receipts = KEYS[1], KEYS[3], KEYS[5]`.
    const bound = new Set(
      [...script.source.matchAll(/local ([\w, ]+) = (KEYS\[\d\](?:, KEYS\[\d\])*)\n/g)].flatMap(([, names]) =>
        (names ?? "").split(",").map((name) => name.trim()),
      ),
    );
    for (const [, command, key = ""] of script.source.matchAll(/redis\.call\("(\w+)", ([^,)]+)/g)) {
      if (command === "PUBLISH" || command === "TIME") continue;
      if (bound.has(key) || key === "key") continue;
      expect(key, `${command} in ${script.name}`).toMatch(/^KEYS\[(\d|i|slot|held|at|5 \+ known)\]$/);
    }
  });
});
