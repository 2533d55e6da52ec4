// #region readme
import { LockAcquisitionError, Semaphore } from "@upstash/lock";
import { Redis } from "@upstash/redis";

// At most 5 calls to the paid API at once, across every function instance and region. One module-level
// Semaphore serves every concurrent caller: each acquisition gets a Lease of its own.
const paidApi = new Semaphore({
  id: "paid-api",
  redis: Redis.fromEnv(),
  limit: 5,
  lease: 30_000, // a caller that dies frees its permit after 30 s at most
  fair: true, // callers get permits in the order they asked
});

export async function summarize(text: string): Promise<string | "busy"> {
  try {
    // Wait up to 10 s for a permit; renew it while the call runs; give it back at the end.
    return await paidApi.runExclusive((signal) => callPaidApi(text, signal), {
      timeout: 10_000,
      autoExtend: true,
    });
  } catch (error) {
    if (error instanceof LockAcquisitionError && error.reason !== "redis-error") return "busy"; // 5 calls ran for 10 s straight
    throw error;
  }
}
// #endregion

// #region await-using
// The same semaphore, one permit held for a block: every acquisition gets a Lease of its own.
export async function summarizeBoth(first: string, second: string): Promise<[string, string]> {
  await using permit = await paidApi.acquireOrThrow({ timeout: 10_000 });
  // One permit for both calls; other callers of paidApi keep their own permits meanwhile.
  return [await callPaidApi(first, permit.signal), await callPaidApi(second, permit.signal)];
} // the permit is given back here, also when a call throws
// #endregion

// #region permit
// A permit taken under a uuid of your choosing (paidApi.acquire({ uuid })) can be released elsewhere.
export async function givePermitBack(uuid: string): Promise<boolean> {
  const permit = paidApi.permit(uuid); // a handle only: sends nothing yet
  if ((await permit.getStatus()) !== "ACQUIRED") return false; // its lease ran out
  return permit.release();
}
// #endregion

/** Stands in for the paid API; the README test swaps in its own. */
export const work = {
  callPaidApi: async (text: string, _signal: AbortSignal): Promise<string> => `summary of ${text}`,
};
function callPaidApi(text: string, signal: AbortSignal): Promise<string> {
  return work.callPaidApi(text, signal);
}
