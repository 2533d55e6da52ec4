// Rewrites the `sha1:` literal after each script `source` in src/scripts/*.ts to the SHA-1 of
// that source. Run after editing a script: `node scripts/update-script-hashes.mjs`.
import { createHash } from "node:crypto";
import { readdirSync, readFileSync, writeFileSync } from "node:fs";

const dir = new URL("../src/scripts/", import.meta.url);
for (const file of readdirSync(dir).filter((name) => name.endsWith(".ts"))) {
  const path = new URL(file, dir);
  const text = readFileSync(path, "utf8");
  const updated = text.replace(
    /source: `([^`]*)`,\n(\s*)sha1: "[0-9a-f]*",/g,
    (_match, source, indent) =>
      `source: \`${source}\`,\n${indent}sha1: "${createHash("sha1").update(source, "utf8").digest("hex")}",`,
  );
  if (updated !== text) {
    writeFileSync(path, updated);
    process.stdout.write(`updated ${file}\n`);
  }
}
