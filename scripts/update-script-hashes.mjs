// Rewrites the SHA-1 literals of each script in src/scripts/*.ts: `sha1:` to the SHA-1 of its
// `source`, and `keyLockedSha1:` to that of the source behind Upstash's key-locking shebang.
// Run after editing a script: `node scripts/update-script-hashes.mjs`.
import { createHash } from "node:crypto";
import { readdirSync, readFileSync, writeFileSync } from "node:fs";

const SHEBANG = "#!lua flags=allow-key-locking\n";
const sha1 = (text) => createHash("sha1").update(text, "utf8").digest("hex");

const dir = new URL("../src/scripts/", import.meta.url);
for (const file of readdirSync(dir).filter((name) => name.endsWith(".ts"))) {
  const path = new URL(file, dir);
  const text = readFileSync(path, "utf8");
  const updated = text.replace(
    /source: `([^`]*)`,\n(\s*)sha1: "[0-9a-f]*",\n\s*keyLockedSha1: "[0-9a-f]*",/g,
    (_match, source, indent) =>
      `source: \`${source}\`,\n${indent}sha1: "${sha1(source)}",\n${indent}keyLockedSha1: "${sha1(SHEBANG + source)}",`,
  );
  if (updated !== text) {
    writeFileSync(path, updated);
    process.stdout.write(`updated ${file}\n`);
  }
}
