import * as permitScripts from "../../src/permits/scripts";
import * as debounceScripts from "../../src/scripts/debounce";
import * as lockScripts from "../../src/scripts/lock";
import type { LuaScript } from "../../src/scripts/script";

/** Every script the library defines, by its export name, for tests that check them all. */
export const allScripts: ReadonlyMap<string, LuaScript> = new Map(
  Object.entries({ ...lockScripts, ...permitScripts, ...debounceScripts }) as [string, LuaScript][],
);
