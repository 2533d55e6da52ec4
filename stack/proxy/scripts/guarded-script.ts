import type { CommandCatalog } from "./command-catalog";
import { keyGuardPrelude } from "./key-guard-prelude";
import type { KeyLockingScript } from "./key-locking-shebang";
import { luaStringLiterals } from "./lua-string-literals";

/** A literal that could name a Redis command or subcommand (`get`, `json.get`, `malloc-stats`). */
const COMMAND_WORD = /^[a-z][a-z0-9_.-]{0,63}$/;

/**
 * The text Redis runs for a script that carried `allow-key-locking`: the key guard (see `key-guard-prelude.ts`)
 * with the specs of the commands the script names, placed so that every line of the user's script keeps its
 * number in Lua error messages: on the shebang's line when the shebang is dropped, at the start of line 2 when
 * other flags keep it.
 *
 * @throws RespConnectionError when Redis, asked about the commands, cannot be reached.
 */
export async function guardedScriptText(script: KeyLockingScript, catalog: CommandCatalog): Promise<string> {
  const words = new Set(
    luaStringLiterals(script.body)
      .map((literal) => literal.toLowerCase())
      .filter((literal) => COMMAND_WORD.test(literal)),
  );
  const prelude = keyGuardPrelude(await catalog.lookup(words), words);
  return script.shebang === undefined
    ? `${prelude}${script.body}`
    : `${script.shebang}\n${prelude}${script.body.slice(1)}`;
}
