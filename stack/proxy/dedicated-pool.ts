import { RespConnection, type RespConnectionOptions } from "../resp/connection";

/**
 * Connections lent to one request at a time, for work that puts a connection in a special state (MULTI ...
 * EXEC). Concurrent borrowers always get different connections; finished ones are kept for reuse, up to
 * `maxIdle`.
 */
export class DedicatedPool {
  readonly #options: RespConnectionOptions;
  readonly #maxIdle: number;
  readonly #idle: RespConnection[] = [];
  readonly #busy = new Set<RespConnection>();
  #closed = false;

  /**
   * @param options Where Redis is.
   * @param maxIdle How many connections to keep open between borrowings.
   */
  constructor(options: RespConnectionOptions, maxIdle: number) {
    this.#options = options;
    this.#maxIdle = maxIdle;
  }

  /**
   * Runs `work` with a connection nobody else uses meanwhile. A connection whose work failed is closed rather
   * than reused, since its state is unknown.
   */
  async use<T>(work: (connection: RespConnection) => Promise<T>): Promise<T> {
    const connection = this.#idle.pop() ?? new RespConnection(this.#options);
    this.#busy.add(connection);
    let reusable = false;
    try {
      const result = await work(connection);
      reusable = true;
      return result;
    } finally {
      this.#busy.delete(connection);
      if (reusable && !this.#closed && this.#idle.length < this.#maxIdle) {
        this.#idle.push(connection);
      } else {
        connection.close();
      }
    }
  }

  /** Closes idle and borrowed connections; borrowers see their pending commands rejected. */
  close(): void {
    this.#closed = true;
    for (const connection of [...this.#idle.splice(0), ...this.#busy]) {
      connection.close();
    }
  }
}
