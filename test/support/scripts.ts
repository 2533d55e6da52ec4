// Every Lua script the library sends, listed here because src/ keeps no list of its own (each entry point
// imports only the scripts it uses), with SHA-1s computed in the test process.
import { createHash } from "node:crypto";
import * as permitScripts from "../../src/permits/scripts";
import * as debounceScripts from "../../src/scripts/debounce";
import * as lockScripts from "../../src/scripts/lock";
import type { LuaScript } from "../../src/scripts/script";

/**
 * Each script under the name it is exported as (several share a `name`, such as "acquire"); test/unit's
 * script test checks that the three modules define them all.
 */
export const allScripts = { ...lockScripts, ...permitScripts, ...debounceScripts } satisfies Record<
  string,
  LuaScript
>;

/** The lowercase hex SHA-1 of `text`'s UTF-8 bytes, as Redis names a script. */
export function sha1(text: string): string {
  return createHash("sha1").update(text, "utf8").digest("hex");
}
