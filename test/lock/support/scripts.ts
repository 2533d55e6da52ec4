// Every Lua script the library sends, listed here because src/ keeps no list of its own (each entry
// point imports only the scripts it uses), with SHA-1s computed in the test process.
import { createHash } from "node:crypto";
import { extendPermit, releasePermit, renewPermit, takePermit } from "../../../src/permits/scripts";
import { countCall, isLatestCall } from "../../../src/scripts/debounce";
import {
  extendLock,
  releaseLock,
  renewLock,
  takeLock,
  takeLockClockFence,
  takeLockCountedFence,
} from "../../../src/scripts/lock";
import type { LuaScript } from "../../../src/scripts/script";

/** Each script under the name it is exported as (several share a `name`, such as "acquire"). */
export const allScripts = {
  takeLock,
  takeLockCountedFence,
  takeLockClockFence,
  releaseLock,
  extendLock,
  renewLock,
  takePermit,
  releasePermit,
  extendPermit,
  renewPermit,
  countCall,
  isLatestCall,
} as const satisfies Record<string, LuaScript>;

/** The lowercase hex SHA-1 of `text`'s UTF-8 bytes, as Redis names a script. */
export function sha1(text: string): string {
  return createHash("sha1").update(text, "utf8").digest("hex");
}
