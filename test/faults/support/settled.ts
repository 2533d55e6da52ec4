import type { LockAcquisitionError } from "../../../src/index";

/** Settles with `value` or `error`, never rejects: a test reads what a call ended with once it is done. */
export function settle<T>(promise: Promise<T>): Promise<{ value: T | undefined; error: unknown }> {
  return promise.then(
    (value) => ({ value, error: undefined }),
    (error: unknown) => ({ value: undefined, error }),
  );
}

/**
 * What a failed acquisition told its caller, for one `toEqual`: its reason, its cause's reason ("none"
 * without one), and its message from the part after the attempt count, round-trip times as "N ms".
 */
export function toldBy(error: LockAcquisitionError): { reason: string; cause: string; message: string } {
  return {
    reason: error.reason,
    cause: error.cause === undefined ? "none" : (error.cause as { reason: string }).reason,
    message: error.message.replace(/^.* ms: /, "").replace(/\d+ ms/, "N ms"),
  };
}
