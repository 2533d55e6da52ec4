import type { Command, CommandArg } from "./command";
import { RespConnectionError, RespReplyError } from "./errors";
import { type LinkOptions, openLink } from "./open-link";
import { RespError, type RespReply } from "./reply";
import type { SocketLink } from "./socket-link";

/** Options of a {@link RespConnection}. */
export interface RespConnectionOptions {
  readonly host: string;
  readonly port: number;
  /**
   * Time allowed for the TCP connect plus the handshake, in milliseconds.
   * @default 5000
   */
  readonly connectTimeoutMs?: number;
  /**
   * Commands sent first on every new connection (e.g. `["AUTH", password]`, `["SELECT", "1"]`).
   * @default []
   */
  readonly handshake?: readonly Command[];
}

/**
 * A Redis connection that connects lazily and reconnects lazily.
 *
 * Nothing happens until the first call. When the socket drops, the calls pending on it are rejected with a
 * {@link RespConnectionError}, and the next call opens a new socket: Redis may be stopped and restarted under
 * a long-lived connection. Each `send()` batch is written contiguously, so concurrent callers never interleave.
 */
export class RespConnection {
  readonly #options: LinkOptions;
  #link: SocketLink | undefined;
  #opening: Promise<SocketLink> | undefined;
  #closed = false;

  constructor(options: RespConnectionOptions) {
    this.#options = {
      host: options.host,
      port: options.port,
      connectTimeoutMs: options.connectTimeoutMs ?? 5000,
      handshake: options.handshake ?? [],
    };
  }

  /** `host:port` of the server. */
  get label(): string {
    return `${this.#options.host}:${this.#options.port}`;
  }

  /** Batches written and not yet answered on the current socket. */
  get pendingBatches(): number {
    return this.#link?.pendingBatches ?? 0;
  }

  /**
   * Sends all commands in one write and resolves with one reply per command, in order. Error replies are
   * values ({@link RespError}), not rejections.
   *
   * @throws RespConnectionError when Redis cannot be reached or the connection drops before all replies arrive.
   */
  send(commands: readonly Command[]): Promise<RespReply[]> {
    const link = this.#link;
    if (link?.alive) {
      return link.send(commands);
    }
    return this.#open().then((opened) => opened.send(commands));
  }

  /**
   * Sends one command and resolves with its reply.
   *
   * @throws RespReplyError when Redis answers with an error.
   * @throws RespConnectionError when Redis cannot be reached.
   */
  async call(...command: CommandArg[]): Promise<RespReply> {
    const [reply = null] = await this.send([command]);
    if (reply instanceof RespError) {
      throw new RespReplyError(reply.message);
    }
    return reply;
  }

  /** Closes the socket; pending calls are rejected, and later calls fail instead of reconnecting. */
  close(): void {
    this.#closed = true;
    this.#link?.destroy(new RespConnectionError(`Redis connection to ${this.label} closed by the client`));
    this.#link = undefined;
  }

  #open(): Promise<SocketLink> {
    if (this.#closed) {
      return Promise.reject(new RespConnectionError(`Redis connection to ${this.label} is closed`));
    }
    this.#opening ??= openLink(this.#options)
      .then((link) => this.#adopt(link))
      .finally(() => {
        this.#opening = undefined;
      });
    return this.#opening;
  }

  #adopt(link: SocketLink): SocketLink {
    if (this.#closed) {
      const error = new RespConnectionError(`Redis connection to ${this.label} closed by the client`);
      link.destroy(error);
      throw error;
    }
    this.#link = link;
    return link;
  }
}
