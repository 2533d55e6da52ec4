import { createHash } from "node:crypto";
import type { Command, CommandArg } from "../../resp/command";
import { RespError, type RespReply } from "../../resp/reply";
import type { CommandCatalog } from "./command-catalog";
import { guardedScriptText } from "./guarded-script";
import { type KeyLockingScript, splitKeyLockingShebang } from "./key-locking-shebang";
import type { PreparedCommands, ScriptGateway } from "./script-gateway";

/** A script flagged `allow-key-locking` as the client knows it and as Redis holds it. */
interface LoadedScript {
  /** SHA-1 of the text the client sent, shebang included: the one it uses with EVALSHA. */
  readonly originalSha: string;
  /** What Redis gets instead: the flag taken out, the key guard put in. */
  readonly text: string;
  /** SHA-1 of `text`, the name Redis knows the script by. */
  readonly sha: string;
}

/** Turns one reply from Redis into the reply the client gets. */
type Restore = (reply: RespReply) => RespReply;

const unchanged: Restore = (reply) => reply;

/**
 * The `emulate` mode of the script flags: scripts carrying `allow-key-locking` reach Redis without the flag
 * and behind a Lua guard that checks their keys; everything else passes through byte for byte.
 *
 * The client only knows the SHA-1 of what it sent, so the proxy keeps a map from that SHA-1 to the script
 * Redis actually holds, and translates EVALSHA, EVALSHA_RO, SCRIPT EXISTS, the reply of SCRIPT LOAD, and
 * the SHA-1 Redis quotes in script errors. An unknown SHA-1 (a restarted proxy, another proxy's script) is
 * forwarded as it is: Redis answers NOSCRIPT and the client falls back to EVAL, which fills the map again.
 * After SCRIPT FLUSH the map still points at the flushed script, so Redis answers NOSCRIPT as it should.
 */
export class KeyLockingEmulation implements ScriptGateway {
  readonly #catalog: CommandCatalog;
  readonly #checkKeys: boolean;
  readonly #loaded = new Map<string, LoadedScript>();

  /**
   * @param catalog Where the key positions of the commands scripts call come from.
   * @param options.checkKeys false leaves out the key guard (the `accept` mode): the flag is only taken out.
   */
  constructor(catalog: CommandCatalog, options: { readonly checkKeys: boolean } = { checkKeys: true }) {
    this.#catalog = catalog;
    this.#checkKeys = options.checkKeys;
  }

  async prepare(commands: readonly Command[]): Promise<PreparedCommands> {
    // In order: an EVALSHA may name a script that an EVAL or SCRIPT LOAD before it in the batch brings in.
    const prepared: [Command, Restore][] = [];
    for (const command of commands) {
      prepared.push(await this.#prepareOne(command));
    }
    const restores = prepared.map(([, restore]) => restore);
    return {
      commands: prepared.map(([command]) => command),
      restore: (replies) => replies.map((reply, index) => (restores[index] ?? unchanged)(reply)),
    };
  }

  async #prepareOne(command: Command): Promise<[Command, Restore]> {
    const [name = "", first, ...rest] = command;
    switch (lowercase(name)) {
      case "eval":
      case "eval_ro": {
        const loaded = await this.#load(first);
        return loaded === undefined ? [command, unchanged] : [[name, loaded.text, ...rest], quoting(loaded)];
      }
      case "evalsha":
      case "evalsha_ro": {
        const loaded = this.#loaded.get(lowercase(first));
        return loaded === undefined ? [command, unchanged] : [[name, loaded.sha, ...rest], quoting(loaded)];
      }
      case "script":
        return this.#prepareScriptCommand(command);
      default:
        return [command, unchanged];
    }
  }

  async #prepareScriptCommand(command: Command): Promise<[Command, Restore]> {
    // Only LOAD and EXISTS are rebuilt, and both have a subcommand, so the defaults never reach Redis.
    const [name = "", subcommand = "", ...args] = command;
    switch (lowercase(subcommand)) {
      case "load": {
        const loaded = await this.#load(args[0]);
        if (loaded === undefined) {
          return [command, unchanged];
        }
        const restore: Restore = (reply) =>
          Buffer.isBuffer(reply) ? Buffer.from(loaded.originalSha) : reply;
        return [[name, subcommand, loaded.text, ...args.slice(1)], restore];
      }
      case "exists":
        return [
          [name, subcommand, ...args.map((sha) => this.#loaded.get(lowercase(sha))?.sha ?? sha)],
          unchanged,
        ];
      default:
        return [command, unchanged];
    }
  }

  /** The loaded form of a flagged script, made once per text; undefined for a script without the flag. */
  async #load(script: CommandArg | undefined): Promise<LoadedScript | undefined> {
    const split = typeof script === "string" ? splitKeyLockingShebang(script) : undefined;
    if (split === undefined) {
      return undefined;
    }
    const originalSha = sha1Hex(script as string);
    const known = this.#loaded.get(originalSha);
    if (known !== undefined) {
      return known;
    }
    // The flag alone leaves `#!lua`, kept where Redis reads shebangs: a script without one runs in Redis's
    // compatibility mode (its OOM check per write command, EVAL_RO of a writing script allowed), Upstash's not.
    const bare = split.shebang === undefined && (await this.#catalog.readsShebangs());
    const kept = bare ? { ...split, shebang: "#!lua" } : split;
    const text = this.#checkKeys ? await guardedScriptText(kept, this.#catalog) : unguardedScriptText(kept);
    const loaded = { originalSha, text, sha: sha1Hex(text) };
    this.#loaded.set(originalSha, loaded);
    return loaded;
  }
}

/** The script without the flag, every line where it was: the shebang's line left empty when it is dropped. */
function unguardedScriptText(script: KeyLockingScript): string {
  return `${script.shebang ?? ""}${script.body}`;
}

/** Redis names the script in its errors (`... script: <sha>, on @user_script:3.`): the client's SHA-1 goes there. */
function quoting(loaded: LoadedScript): Restore {
  return (reply) =>
    reply instanceof RespError
      ? new RespError(reply.message.replaceAll(loaded.sha, loaded.originalSha))
      : reply;
}

function lowercase(arg: CommandArg | undefined): string {
  return String(arg ?? "").toLowerCase();
}

/** Lowercase hex SHA-1 of the UTF-8 text, as the client and Redis compute it. */
function sha1Hex(text: string): string {
  return createHash("sha1").update(text, "utf8").digest("hex");
}
