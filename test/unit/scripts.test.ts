import { createHash } from "node:crypto";
import { readdirSync, readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { allScripts } from "../../src/scripts/all";

describe("script SHA-1 literals", () => {
  it.each(allScripts.map((script) => [script.name, script] as const))(
    "%s matches its source",
    (_name, script) => {
      expect(script.sha1).toBe(createHash("sha1").update(script.source, "utf8").digest("hex"));
    },
  );

  it("lists every script defined in src/scripts", () => {
    const dir = new URL("../../src/scripts/", import.meta.url);
    const literals = readdirSync(dir)
      .map((file) => readFileSync(new URL(file, dir), "utf8"))
      .flatMap((text) => [...text.matchAll(/sha1: "([0-9a-f]{40})"/g)].map((match) => match[1]));
    expect(new Set(allScripts.map((script) => script.sha1))).toEqual(new Set(literals));
  });
});
