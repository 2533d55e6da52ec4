import type { LockOperation } from "../errors";
import { companionKey, FENCE_COUNTER_LIFETIME_MS } from "../keys";
import type { ScriptArgument } from "../redis/client";
import type { LuaScript } from "../scripts/script";
import {
  anyHold,
  type LockStore,
  observation,
  runScript,
  type StoreMaker,
  type StoreTarget,
  type Take,
  undoing,
} from "../store";
import { upstashFeedOf } from "../wake/upstash";
import { FairWaiter } from "./queue";
import { extendPermit, releasePermit, renewPermit, takePermit } from "./scripts";

/** The most permits a semaphore may have: every request sends every permit's key. */
export const MAX_PERMITS = 1_000;

/**
 * A semaphore's permits or a fair lock's key and line, on one Redis (server, primary or cluster: one slot).
 * @param limit how many permits: `{key}:permit:1` and on; a fair lock's only permit is its key itself.
 */
/* @__NO_SIDE_EFFECTS__ */
export function permitStore(limit: number | "lock-key", fair: boolean): StoreMaker {
  const make = (target: StoreTarget): LockStore => {
    const { key, channelKey } = target;
    const keys = [":queue", ":queue-deadlines", ":queue-places", ":fence", ":receipts"].map((suffix) =>
      companionKey(key, suffix),
    );
    if (limit === "lock-key") keys.push(key);
    else for (let permit = 1; permit <= limit; permit++) keys.push(companionKey(key, `:permit:${permit}`));
    // Every reply but a release's is led by a flag (taken, held).
    const run = (operation: LockOperation, script: LuaScript, args: ScriptArgument[]) =>
      runScript(target, operation, script, keys, args, operation !== "release");
    const flag = fair ? "1" : "0";
    // Then now (ms; a leave's is its waiter's clock), a release's permit, lease and hold: an undo sends none.
    const release = (token: string, id: string, matching: boolean, leaving = "", ...rest: ScriptArgument[]) =>
      run("release", releasePermit, [token, id, matching ? "1" : "0", channelKey, flag, leaving, ...rest]);
    // A waiter leaves the line, handing on a permit granted it meanwhile: the release that handed it listed
    // the waiter by its id in line. Its name in line is `<id>:<grant ms>:<token>`; its deadline moves to
    // `stayMs` from `now` (its clock, later than any try it sent). Never rejects.
    const leave = async (member: string, stayMs: number, now: number) => {
      const [id = "", , ...token] = member.split(":");
      await release(token.join(":"), id, true, member, now, 0, stayMs).catch(() => undefined);
    };
    return {
      waiter: (token, plan, background) => {
        // A fair waiter learns of its turn from a release: @upstash/redis subscribes even without wake-ups.
        const events = plan.wakeOnRelease
          ? (target.events() ?? (fair ? upstashFeedOf(target.client)?.lockEvents(channelKey) : undefined))
          : undefined;
        return fair ? new FairWaiter(token, plan, events, leave, background) : events?.waiter(plan);
      },
      async take({ token, nonce, lease, fencing, queue, permit }): Promise<Take> {
        // Without a clock floor (Upstash's default) the counter never expires, so no clock is read.
        const clockFloor = fencing && (fencing.clockFloor ?? target.server !== "upstash");
        const [taken, detail = -1, third = 0, place = 0, kept, left = -1] = await run("acquire", takePermit, [
          token,
          nonce,
          lease,
          channelKey,
          queue ? flag : "0",
          queue?.member ?? "",
          queue?.now ?? 0,
          queue?.entryMs ?? 0,
          queue?.lastTry ? "1" : "0",
          permit ?? 0,
          !fencing ? "" : clockFloor ? "clock" : "count",
          lease + FENCE_COUNTER_LIFETIME_MS,
        ]);
        // Held under the waiter's name: a copy of its try, sent before a release handed it the permit.
        const hold = taken === 1 && place === 1 ? (queue?.member.split(":")[0] ?? nonce) : nonce;
        if (taken === 1)
          return {
            kind: "acquired",
            permit: detail,
            fencingToken: fencing ? third : undefined,
            hold,
            kept: kept === 1,
            pttl: left >= 0 ? left : undefined,
          };
        return { kind: "held", pttl: detail, ahead: third, place };
      },
      async undo(token, nonce, lease) {
        await undoing(() => release(token, nonce, true, "", Date.now()), lease);
      },
      async release(token, lease, permit, { id, hold } = anyHold()) {
        // Each call has its own id, so that its receipt answers only its own re-runs.
        const [released] = await release(token, id, false, "", Date.now(), permit ?? 0, lease, hold);
        return released === 1;
      },
      async extend(token, amount, lease, permit, { id, hold } = anyHold()) {
        return observation(await run("extend", extendPermit, [token, id, amount, permit ?? 0, lease, hold]));
      },
      async renew(token, lease, permit, confirm = true, hold = "") {
        return observation(
          await run("renew", renewPermit, [token, lease, permit ?? 0, confirm ? 1 : 0, hold]),
        );
      },
      async status(token, _lease, permit, confirm = true, hold = "") {
        const args = [token, confirm ? 0 : -1, permit ?? 0, 1, hold];
        return observation(await run("status", renewPermit, args));
      },
    };
  };
  return Object.assign(make, { permits: limit === "lock-key" ? 1 : limit });
}
