import { sleep } from "../sleep";

/**
 * Lets a release announcement cut a wait short. A ring that arrives while no one waits (during
 * an attempt) is remembered, so the next wait ends at once rather than missing it.
 */
export class Doorbell {
  #rung = false;
  #wake: (() => void) | undefined;

  /** Called by the release feed. */
  readonly ring = (): void => {
    this.#rung = true;
    this.#wake?.();
  };

  /** Forgets earlier rings: called as an attempt is sent, which sees any release before it. */
  reset(): void {
    this.#rung = false;
  }

  /** Waits `ms`, or less if the bell rings; rejects with `signal.reason` on abort. */
  async wait(ms: number, signal: AbortSignal | undefined): Promise<void> {
    if (signal?.aborted) throw signal.reason;
    if (this.#rung) return;
    const controller = new AbortController();
    const onAbort = () => controller.abort(signal?.reason);
    signal?.addEventListener("abort", onAbort, { once: true });
    this.#wake = () => controller.abort(RUNG);
    try {
      await sleep(ms, controller.signal);
    } catch (reason) {
      if (reason !== RUNG) throw reason;
    } finally {
      this.#wake = undefined;
      signal?.removeEventListener("abort", onAbort);
    }
  }
}

const RUNG = Symbol("rung");
