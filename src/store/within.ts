import { backgroundTimer } from "../timers";

/** Why a request to one instance gave no answer in time. */
export class InstanceTimeoutError extends Error {
  override name = "InstanceTimeoutError";
  constructor(ms: number) {
    super(`no reply within ${ms} ms`);
  }
}

/**
 * Settles like `work`, or rejects with an InstanceTimeoutError after `ms`: a client that queues
 * commands while it reconnects must not stall a whole quorum. `onLate` receives `work` after a
 * timeout, to clean up whatever it did; it must not reject.
 */
export function within<T>(work: Promise<T>, ms: number, onLate: (work: Promise<T>) => void): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = backgroundTimer(ms, () => {
      onLate(work);
      reject(new InstanceTimeoutError(ms));
    });
    work.then(
      (value) => {
        clearTimeout(timer);
        resolve(value);
      },
      (error: unknown) => {
        clearTimeout(timer);
        reject(error);
      },
    );
  });
}
