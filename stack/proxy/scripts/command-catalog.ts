import type { Command } from "../../resp/command";
import type { RespReply } from "../../resp/reply";
import { type CommandAccess, commandAccess } from "./command-access";

/** Sends one command to Redis and resolves with its reply (rejecting on an error reply). */
export type RedisCall = (command: Command) => Promise<RespReply>;

/**
 * What Redis says about the commands scripts name, asked once per name with `COMMAND INFO` and kept for the
 * life of the proxy: the answer only changes when the server is replaced by another version.
 */
export class CommandCatalog {
  readonly #call: RedisCall;
  /** undefined: Redis does not know the name. */
  readonly #known = new Map<string, CommandAccess | undefined>();
  #shebangs: Promise<boolean> | undefined;

  /** @param call How to reach Redis (a shared connection). */
  constructor(call: RedisCall) {
    this.#call = call;
  }

  /**
   * Whether Redis reads script shebangs (Redis 7 and later), asked once: its `COMMAND INFO` entries then carry
   * key specs (ten fields; Redis 6 gives seven), which came with shebangs in the same release.
   *
   * @throws RespConnectionError when Redis cannot be reached (the next call asks again).
   */
  readsShebangs(): Promise<boolean> {
    this.#shebangs ??= this.#call(["COMMAND", "INFO", "eval"]).then(
      (reply) => Array.isArray(reply) && Array.isArray(reply[0]) && reply[0].length >= 10,
    );
    this.#shebangs.catch(() => {
      this.#shebangs = undefined;
    });
    return this.#shebangs;
  }

  /**
   * The access of each name Redis knows as a command, asking Redis in one `COMMAND INFO` for the names not
   * asked before.
   *
   * @param names Lowercase words; those that are not commands are simply absent from the result.
   * @throws RespConnectionError when Redis cannot be reached.
   */
  async lookup(names: Iterable<string>): Promise<Map<string, CommandAccess>> {
    const wanted = [...new Set(names)];
    const missing = wanted.filter((name) => !this.#known.has(name));
    if (missing.length > 0) {
      const reply = await this.#call(["COMMAND", "INFO", ...missing]);
      const infos = Array.isArray(reply) ? reply : [];
      missing.forEach((name, index) => {
        this.#known.set(name, commandAccess(infos[index] ?? null));
      });
    }
    const found = new Map<string, CommandAccess>();
    for (const name of wanted) {
      const access = this.#known.get(name);
      if (access !== undefined) {
        found.set(name, access);
      }
    }
    return found;
  }
}
