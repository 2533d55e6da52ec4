import { RespConnection, type RespConnectionOptions } from "../resp/connection";

/**
 * A few long-lived connections shared by `/` and `/pipeline` requests. Each request's commands go out in one
 * write on one connection, so requests never interleave; spreading them over several sockets keeps one large
 * reply from delaying every other request.
 */
export class SharedPool {
  readonly #connections: readonly RespConnection[];
  #next = 0;

  /**
   * @param options Where Redis is.
   * @param size Number of connections (at least 1).
   */
  constructor(options: RespConnectionOptions, size: number) {
    this.#connections = Array.from({ length: Math.max(1, size) }, () => new RespConnection(options));
  }

  /** The connection with the fewest batches in flight, rotating among equals. */
  pick(): RespConnection {
    const count = this.#connections.length;
    let best = this.#connections[this.#next % count] as RespConnection;
    for (let step = 1; step < count; step += 1) {
      const candidate = this.#connections[(this.#next + step) % count] as RespConnection;
      if (candidate.pendingBatches < best.pendingBatches) {
        best = candidate;
      }
    }
    this.#next = (this.#next + 1) % count;
    return best;
  }

  /** Closes every connection; pending commands are rejected. */
  close(): void {
    for (const connection of this.#connections) {
      connection.close();
    }
  }
}
