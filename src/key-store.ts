import { orderAfter } from "./ids";
import { companionKey, FENCE_COUNTER_LIFETIME_MS } from "./keys";
import {
  extendLock,
  releaseLock,
  renewLock,
  takeLock,
  takeLockClockFence,
  takeLockCountedFence,
} from "./scripts/lock";
import {
  anyHold,
  type LockStore,
  observation,
  runScript,
  type StoreTarget,
  type Take,
  type TakeRequest,
  undoing,
} from "./store";

/** A lock whose key lives on one Redis (a single server, a replicated primary, or a cluster). */
export function keyStore(target: StoreTarget): LockStore {
  const { key } = target;
  const [receipt, grant] = [companionKey(key, ":receipt"), companionKey(key, ":grant")];
  const taking = [key, grant];
  const fenced = [key, grant, companionKey(key, ":fence")];
  const releasing = [key, receipt, grant];
  return {
    waiter: (_token, plan) => (plan.wakeOnRelease ? target.events()?.waiter(plan) : undefined),
    async take({ token, nonce, lease, fencing }: TakeRequest): Promise<Take> {
      // Without a clock floor (Upstash's default) the counter never expires, so no clock is read.
      const clockFloor = fencing && (fencing.clockFloor ?? target.server !== "upstash");
      const script = !fencing ? takeLock : clockFloor ? takeLockClockFence : takeLockCountedFence;
      const args: [string, ...(string | number)[]] = [token, nonce, lease];
      if (clockFloor) args.push(lease + FENCE_COUNTER_LIFETIME_MS);
      const keys = fencing ? fenced : taking;
      const [taken, detail = -1, kept] = await runScript(target, "acquire", script, keys, args, true);
      if (taken === 1)
        return {
          kind: "acquired",
          fencingToken: fencing ? detail : undefined,
          permit: 1,
          hold: nonce,
          kept: kept === 1,
        };
      // Held by a try of this token sent after this one: nothing done; the next try's id comes after it.
      if (detail === -3 && kept !== undefined) {
        orderAfter(kept);
        return { kind: "held", pttl: -1, after: true };
      }
      return { kind: "held", pttl: detail };
    },
    async undo(token, nonce, lease) {
      await undoing(() => runScript(target, "release", releaseLock, releasing, [token, nonce, "1"]), lease);
    },
    async release(token, lease, _permit, { id, hold } = anyHold()) {
      // Each call has its own id, so that its receipt answers only its own re-runs.
      const args = [token, id, "0", lease, hold];
      const [released] = await runScript(target, "release", releaseLock, releasing, args);
      return released === 1;
    },
    async extend(token, amount, lease, _permit, { id, hold } = anyHold()) {
      const args = [token, id, amount, lease, hold];
      return observation(await runScript(target, "extend", extendLock, releasing, args, true));
    },
    async renew(token, lease, _permit, confirm = true, hold = "") {
      const args = [token, lease, confirm ? "1" : "0", hold];
      return observation(await runScript(target, "renew", renewLock, taking, args, true));
    },
    async status(token, _lease, _permit, confirm = true, hold = "") {
      const args = [token, confirm ? 0 : -1, "1", hold];
      return observation(await runScript(target, "status", renewLock, taking, args, true));
    },
  };
}
