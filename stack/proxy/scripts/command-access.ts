import { RespInteger, type RespReply, RespStatus } from "../../resp/reply";

/**
 * Where one group of a command's keys sits among its arguments, in the terms of Redis 7 key specs
 * (`COMMAND INFO`, element 9). Positions count the command name as 0.
 */
export interface KeySpec {
  /** Where the search starts: a fixed position, or just after a keyword searched from `startFrom`. */
  readonly begin: { readonly index: number } | { readonly keyword: string; readonly startFrom: number };
  /**
   * Which arguments from there are keys: a range (`lastKey` relative to the start, or from the end when
   * negative), or a count read from the arguments (`keyNumIndex` relative to the start).
   */
  readonly find:
    | { readonly lastKey: number; readonly keyStep: number; readonly limit: number }
    | { readonly keyNumIndex: number; readonly firstKey: number; readonly keyStep: number };
}

/** What a script flagged `allow-key-locking` may do with a command, as far as the emulation can tell. */
export type CommandAccess =
  /** Redis refuses it in any script (`noscript`), so there is nothing to check. */
  | { readonly kind: "refused-by-redis" }
  /** It reaches the whole database (FLUSHDB, KEYS, SCAN...): rejected. */
  | { readonly kind: "database" }
  /** Its keys cannot be found from its arguments (SORT's BY/GET patterns, MIGRATE's KEYS): rejected. */
  | { readonly kind: "opaque" }
  /** Allowed when every key the specs find is declared in KEYS; no specs means keyless (PING, PUBLISH). */
  | { readonly kind: "keys"; readonly specs: readonly KeySpec[] }
  /** A container (OBJECT, XINFO...): the access depends on the subcommand, keyed by lowercase name. */
  | { readonly kind: "container"; readonly subcommands: ReadonlyMap<string, CommandAccess> };

/**
 * Keyless commands that reach beyond the script's keys without carrying any of the categories that
 * {@link commandAccess} treats as database-wide: SELECT moves every later call to another database, and the
 * two CLUSTER subcommands read the keys of a whole slot.
 */
const DATABASE_WIDE_EXTRAS: ReadonlySet<string> = new Set([
  "select",
  "cluster|getkeysinslot",
  "cluster|countkeysinslot",
]);

/** ACL categories that make a keyless command database-wide (FLUSHDB, KEYS, SCAN, DBSIZE, INFO, ...). */
const DATABASE_WIDE_CATEGORIES: ReadonlySet<string> = new Set(["@keyspace", "@dangerous", "@admin"]);

/** Keywords end up in Lua source; Redis's are plain words, and anything else is not followed. */
const PLAIN_KEYWORD = /^[A-Za-z0-9_-]+$/;

/**
 * Reads one entry of a `COMMAND INFO` reply (RESP2) into a {@link CommandAccess}.
 *
 * - `noscript` commands: left to Redis, which refuses them in scripts.
 * - Key specs (Redis 7) describe keys, movable ones included (ZUNIONSTORE's numkeys, XREAD's STREAMS);
 *   specs marked `not_key` (SPUBLISH's shard channel) are skipped; an `unknown` or `incomplete` spec makes
 *   the command opaque.
 * - Without key specs (Redis 6), first/last/step describe the keys, and `movablekeys` makes it opaque.
 * - A keyless command is database-wide when it is in `@keyspace`, `@dangerous` or `@admin`, or is SELECT.
 *
 * @returns undefined for a nil entry: Redis does not know the command.
 */
export function commandAccess(info: RespReply): CommandAccess | undefined {
  if (!Array.isArray(info)) {
    return undefined;
  }
  const [name, , flags, first, last, step, categories, , keySpecs, subcommands] = info;
  const fullName = text(name).toLowerCase();
  if (texts(flags).includes("noscript")) {
    return { kind: "refused-by-redis" };
  }
  if (Array.isArray(subcommands) && subcommands.length > 0) {
    return { kind: "container", subcommands: containerAccess(subcommands) };
  }
  const specs = Array.isArray(keySpecs)
    ? keySpecs.map(readKeySpec)
    : legacyKeySpecs(integer(first), integer(last), integer(step), texts(flags).includes("movablekeys"));
  if (specs === undefined || specs.includes(undefined)) {
    return { kind: "opaque" };
  }
  const keys = specs.filter((spec): spec is KeySpec => spec !== null);
  if (specs.length === 0 && isDatabaseWide(fullName, texts(categories))) {
    return { kind: "database" };
  }
  return { kind: "keys", specs: keys };
}

function containerAccess(subcommands: readonly RespReply[]): Map<string, CommandAccess> {
  const access = new Map<string, CommandAccess>();
  for (const info of subcommands) {
    const fullName = Array.isArray(info) ? text(info[0]).toLowerCase() : "";
    const sub = fullName.slice(fullName.indexOf("|") + 1);
    const subAccess = commandAccess(info);
    if (sub !== "" && subAccess !== undefined) {
      access.set(sub, subAccess);
    }
  }
  return access;
}

function isDatabaseWide(fullName: string, categories: readonly string[]): boolean {
  return (
    DATABASE_WIDE_EXTRAS.has(fullName) ||
    categories.some((category) => DATABASE_WIDE_CATEGORIES.has(category))
  );
}

/**
 * One key spec: a {@link KeySpec}, null for a spec that names no keys (`not_key`), undefined for one the
 * emulation cannot follow.
 */
function readKeySpec(reply: RespReply): KeySpec | null | undefined {
  const spec = fields(reply);
  const flags = texts(spec.get("flags")).map((flag) => flag.toLowerCase());
  if (flags.includes("not_key")) {
    return null;
  }
  if (flags.includes("incomplete")) {
    return undefined;
  }
  const begin = beginSearch(fields(spec.get("begin_search")));
  const find = findKeys(fields(spec.get("find_keys")));
  return begin === undefined || find === undefined ? undefined : { begin, find };
}

function beginSearch(search: Map<string, RespReply>): KeySpec["begin"] | undefined {
  const spec = fields(search.get("spec"));
  switch (text(search.get("type"))) {
    case "index":
      return { index: integer(spec.get("index")) };
    case "keyword": {
      const keyword = text(spec.get("keyword"));
      return PLAIN_KEYWORD.test(keyword)
        ? { keyword: keyword.toLowerCase(), startFrom: integer(spec.get("startfrom")) }
        : undefined;
    }
    default:
      return undefined;
  }
}

function findKeys(find: Map<string, RespReply>): KeySpec["find"] | undefined {
  const spec = fields(find.get("spec"));
  switch (text(find.get("type"))) {
    case "range": {
      const range = {
        lastKey: integer(spec.get("lastkey")),
        keyStep: integer(spec.get("keystep")),
        limit: integer(spec.get("limit")),
      };
      return range.keyStep > 0 ? range : undefined;
    }
    case "keynum": {
      const keynum = {
        keyNumIndex: integer(spec.get("keynumidx")),
        firstKey: integer(spec.get("firstkey")),
        keyStep: integer(spec.get("keystep")),
      };
      return keynum.keyStep > 0 ? keynum : undefined;
    }
    default:
      return undefined;
  }
}

/** Redis 6's description: keys from `first` to `last` (negative: from the end) every `step`. */
function legacyKeySpecs(first: number, last: number, step: number, movable: boolean): KeySpec[] | undefined {
  if (movable) {
    return undefined;
  }
  if (first <= 0) {
    return [];
  }
  return [
    {
      begin: { index: first },
      find: { lastKey: last < 0 ? last : last - first, keyStep: Math.max(step, 1), limit: 0 },
    },
  ];
}

/** A RESP2 map (a flat array of name, value pairs). */
function fields(reply: RespReply | undefined): Map<string, RespReply> {
  const map = new Map<string, RespReply>();
  if (Array.isArray(reply)) {
    for (let index = 0; index + 1 < reply.length; index += 2) {
      map.set(text(reply[index]), reply[index + 1] ?? null);
    }
  }
  return map;
}

function text(reply: RespReply | undefined): string {
  if (Buffer.isBuffer(reply)) {
    return reply.toString("utf8");
  }
  return reply instanceof RespStatus ? reply.text : "";
}

function texts(reply: RespReply | undefined): string[] {
  return Array.isArray(reply) ? reply.map(text) : [];
}

function integer(reply: RespReply | undefined): number {
  return reply instanceof RespInteger ? reply.toNumber() : 0;
}
