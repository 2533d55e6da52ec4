import type { Socket } from "node:net";
import type { Command } from "./command";
import { encodeCommands } from "./encoder";
import { RespConnectionError, RespProtocolError } from "./errors";
import { RespParser } from "./parser";
import type { RespReply } from "./reply";

/** A batch written to the socket whose replies are still arriving. */
interface PendingBatch {
  readonly replies: RespReply[];
  readonly expected: number;
  readonly resolve: (replies: RespReply[]) => void;
  readonly reject: (error: Error) => void;
}

/**
 * One socket to Redis and the FIFO of batches waiting for replies on it.
 *
 * Redis answers commands in the order it receives them, so replies are matched to batches purely by position.
 * A link never reconnects: once it fails, every pending and later batch is rejected with the same error, and
 * the owner ({@link RespConnection}) opens a new link.
 */
export class SocketLink {
  readonly #socket: Socket;
  readonly #label: string;
  readonly #parser = new RespParser();
  readonly #pending: PendingBatch[] = [];
  readonly #ready: Promise<void>;
  #failure: Error | undefined;
  #rejectReady: ((error: Error) => void) | undefined;

  /**
   * @param socket A socket that is connecting or connected; writes made before it connects are buffered by Node.
   * @param label `host:port`, used in error messages.
   */
  constructor(socket: Socket, label: string) {
    this.#socket = socket;
    this.#label = label;
    this.#ready = new Promise<void>((resolve, reject) => {
      this.#rejectReady = reject;
      if (!socket.connecting && !socket.destroyed) {
        resolve();
      }
      socket.once("connect", () => resolve());
    });
    // Nobody may be waiting for readiness when the link fails later; that must not be an unhandled rejection.
    this.#ready.catch(() => undefined);
    socket.on("data", (chunk: Buffer) => this.#onData(chunk));
    socket.on("error", (error) => this.#fail(this.#dropped(`failed: ${error.message}`, error)));
    socket.on("close", () => this.#fail(this.#dropped("closed")));
  }

  /** Resolves once the TCP connection is established; rejects if the link fails first. */
  get ready(): Promise<void> {
    return this.#ready;
  }

  /** False once the socket failed or closed; a dead link rejects every batch. */
  get alive(): boolean {
    return this.#failure === undefined;
  }

  /** How many written batches still wait for replies. */
  get pendingBatches(): number {
    return this.#pending.length;
  }

  /**
   * Writes all commands in one socket write and resolves with one reply per command, error replies included
   * as values.
   */
  send(commands: readonly Command[]): Promise<RespReply[]> {
    if (this.#failure !== undefined) {
      return Promise.reject(this.#failure);
    }
    if (commands.length === 0) {
      return Promise.resolve([]);
    }
    let payload: Buffer;
    try {
      payload = encodeCommands(commands);
    } catch (error) {
      return Promise.reject(error);
    }
    return new Promise<RespReply[]>((resolve, reject) => {
      this.#pending.push({ replies: [], expected: commands.length, resolve, reject });
      this.#socket.write(payload);
    });
  }

  /** Fails the link with `error` (rejecting pending batches) and destroys the socket. */
  destroy(error: Error): void {
    this.#fail(error);
    this.#socket.destroy();
  }

  #onData(chunk: Buffer): void {
    let replies: RespReply[];
    try {
      replies = this.#parser.feed(chunk);
    } catch (error) {
      this.destroy(error as Error);
      return;
    }
    for (const reply of replies) {
      const batch = this.#pending[0];
      if (batch === undefined) {
        this.destroy(new RespProtocolError(`Unsolicited reply from Redis at ${this.#label}`));
        return;
      }
      batch.replies.push(reply);
      if (batch.replies.length === batch.expected) {
        this.#pending.shift();
        batch.resolve(batch.replies);
      }
    }
  }

  #dropped(what: string, cause?: Error): RespConnectionError {
    const pending = this.#pending.length;
    const detail = pending > 0 ? ` (${pending} batch${pending === 1 ? "" : "es"} pending)` : "";
    return new RespConnectionError(
      `Redis connection to ${this.#label} ${what}${detail}`,
      cause === undefined ? undefined : { cause },
    );
  }

  #fail(error: Error): void {
    if (this.#failure !== undefined) {
      return;
    }
    this.#failure = error;
    this.#rejectReady?.(error);
    for (const batch of this.#pending.splice(0)) {
      batch.reject(error);
    }
  }
}
