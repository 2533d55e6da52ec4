import { newCallId } from "../ids";
import { companionKey, FENCE_COUNTER_LIFETIME_MS } from "../keys";
import {
  type LockStore,
  observation,
  runScript,
  type StoreMaker,
  type StoreTarget,
  type Take,
} from "../store";
import { upstashFeedOf } from "../wake/upstash";
import { FairWaiter } from "./queue";
import { extendPermit, releasePermit, renewPermit, takePermit } from "./scripts";

/** The most permits a semaphore may have: every request sends every permit's key. */
export const MAX_PERMITS = 1_000;

/** The token part of a waiter's name in line, `<id>:<grant ms>:<token>`. */
function tokenOf(member: string): string {
  return member.slice(member.indexOf(":", member.indexOf(":") + 1) + 1);
}

/**
 * A semaphore's permits or a fair lock's key and line, on one Redis (server, primary or cluster: one slot).
 * @param limit how many permits: `{key}:permit:1` and on; a fair lock's only permit is its key itself.
 */
/* @__NO_SIDE_EFFECTS__ */
export function permitStore(limit: number | "lock-key", fair: boolean): StoreMaker {
  const make = (target: StoreTarget) => {
    const { key } = target;
    const permits =
      limit === "lock-key"
        ? [key]
        : Array.from({ length: limit }, (_, index) => companionKey(key, `:permit:${index + 1}`));
    const keys = [
      ...[":queue", ":queue-deadlines", ":queue-places", ":fence", ":receipts"].map((suffix) =>
        companionKey(key, suffix),
      ),
      ...permits,
    ];
    const flag = fair ? "1" : "0";
    const release = (token: string, id: string, matching: boolean, leaving = "", permit = 0) =>
      runScript(target, "release", releasePermit, keys, [
        token,
        id,
        matching ? "1" : "0",
        target.channelKey,
        flag,
        leaving,
        Date.now(),
        permit,
      ]);
    // A waiter leaves the line, handing on a permit granted it meanwhile: the release that handed it listed
    // the waiter by its id in line (the part before ":"). Never rejects.
    const leave = async (member: string) => {
      await release(tokenOf(member), member.slice(0, member.indexOf(":")), true, member).catch(
        () => undefined,
      );
    };
    const store: LockStore = {
      waiter: (token, plan, background) => {
        // A fair waiter learns of its turn from a release: @upstash/redis subscribes even without wake-ups.
        const events = plan.wakeOnRelease
          ? (target.events() ??
            (fair ? upstashFeedOf(target.client)?.lockEvents(target.channelKey) : undefined))
          : undefined;
        return fair ? new FairWaiter(token, plan, events, leave, background) : events?.waiter(plan);
      },
      async take({ token, nonce, lease, fencing, queue, permit }): Promise<Take> {
        const clockFloor = fencing && (fencing.clockFloor ?? target.server !== "upstash");
        const fence = !fencing ? "" : clockFloor ? "clock" : "count";
        const args: [string, ...(string | number)[]] = [
          token,
          nonce,
          lease,
          target.channelKey,
          queue ? flag : "0",
          queue?.member ?? "",
          queue?.now ?? 0,
          queue?.entryMs ?? 0,
          queue?.lastTry ? "1" : "0",
          permit ?? 0,
          fence,
          lease + FENCE_COUNTER_LIFETIME_MS,
        ];
        const [taken, detail = -1, third = 0, place = 0] = await runScript(
          target,
          "acquire",
          takePermit,
          keys,
          args,
        );
        if (taken === 1)
          return { kind: "acquired", permit: detail, fencingToken: fencing ? third : undefined };
        return { kind: "held", pttl: detail, ahead: third, place };
      },
      async undo(token, nonce) {
        await release(token, nonce, true).catch(() => undefined);
      },
      async release(token, _lease, permit) {
        // Each call gets its own id, so that its receipt answers only its own re-runs.
        const [released] = await release(token, newCallId(), false, "", permit);
        return released === 1;
      },
      async extend(token, amount, _lease, permit) {
        return observation(
          await runScript(target, "extend", extendPermit, keys, [token, newCallId(), amount, permit ?? 0]),
        );
      },
      async renew(token, lease, permit) {
        return observation(await runScript(target, "renew", renewPermit, keys, [token, lease, permit ?? 0]));
      },
      async status(token, _lease, permit, confirm = true) {
        const args = [token, confirm ? 0 : -1, permit ?? 0];
        return observation(await runScript(target, "status", renewPermit, keys, args));
      },
    };
    return store;
  };
  return Object.assign(make, { permits: limit === "lock-key" ? 1 : limit });
}
