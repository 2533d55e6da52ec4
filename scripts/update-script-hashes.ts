// Rewrites the SHA-1 literals of every script in src/scripts/*.ts after a script changed:
// `npx tsx scripts/update-script-hashes.ts`. Each exported script's text is taken from the module
// itself (a source may be built from shared pieces), and the `sha1:` and `keyLockedSha1:` literals
// inside its `export const <name> = defineScript({ ... })` are set to the SHA-1 of its two forms.
import { createHash } from "node:crypto";
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import type { LuaScript } from "../src/scripts/script";

const sha1 = (text: string) => createHash("sha1").update(text, "utf8").digest("hex");
const dir = new URL("../src/scripts/", import.meta.url);

function isScript(value: unknown): value is LuaScript {
  return typeof value === "object" && value !== null && "keyLocked" in value && "source" in value;
}

for (const file of readdirSync(dir).filter((name) => name.endsWith(".ts"))) {
  const path = new URL(file, dir);
  const module = (await import(path.href)) as Record<string, unknown>;
  let text = readFileSync(path, "utf8");
  for (const [name, value] of Object.entries(module)) {
    if (!isScript(value)) continue;
    const start = text.indexOf(`export const ${name} = defineScript({`);
    if (start === -1) throw new Error(`${file}: no \`export const ${name} = defineScript({\``);
    const end = text.indexOf("\n});", start);
    const definition = text
      .slice(start, end)
      .replace(/(\n\s*sha1: )"[0-9a-f]*"/, `$1"${sha1(value.source)}"`)
      .replace(/(\n\s*keyLockedSha1: )"[0-9a-f]*"/, `$1"${sha1(value.keyLocked.source)}"`);
    text = text.slice(0, start) + definition + text.slice(end);
  }
  if (text !== readFileSync(path, "utf8")) {
    writeFileSync(path, text);
    process.stdout.write(`updated ${file}\n`);
  }
}
