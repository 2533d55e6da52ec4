// A quorum's wake-ups after members missed an announcement (review helper-49 of 2026-12-04). The n-th release
// counted as the lock's once a majority of members had announced n since the wait began listening: a member
// that missed one (restarted without persistence, it no longer held the key its release deleted elsewhere)
// stayed behind for good, and once another member missed the next hold, a release announced on a majority
// woke nobody: the waiter slept until its safety poll (about 9.5 s with maxDelay 10 s).
import type { Redis as IoRedis } from "ioredis";
import { describe, expect, it } from "vitest";
import { enableWakeUps, Lock, quorum } from "../../src/index";
import { waitUntil } from "../faults/support/time";
import { uniqueId } from "../support/redis";
import { useMembers } from "./support/members";

const members = useMembers(3);
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const WOKEN_WITHIN_MS = 2_000; // the safety poll comes about 10 s after the release; a wake-up in ms

describe("quorum with wake-ups: members that forgot holds (restarted without persistence)", () => {
  // `forgets`: the member that forgets the second hold. 0: the second release is announced on members 1 and
  // 2, which heard the first; 2: on members 0 and 1, where member 0 missed the first.
  it.each([0, 2])(
    "a release announced on a majority wakes a covered waiter (member %i forgets)",
    async (forgets) => {
      const id = uniqueId("quorum-missed-announcement");
      const raw = members.connect(3) as IoRedis[];
      const waiters = [0, 1].map(() => {
        const redis = quorum(members.connect(3));
        enableWakeUps(redis);
        return new Lock({ id, redis, lease: 30_000 });
      });
      const holder = new Lock({ id, redis: quorum(members.connect(3)), lease: 30_000 });
      expect(await holder.acquire()).toBe(true);
      // A member's take may land after the round succeeded on a majority (and stays): wait for it, lest a
      // waiter's round take that member first and the hold be on two members only.
      await waitUntil(
        async () => new Set(await Promise.all(raw.map((m) => m.get(id)))).size === 1,
        "held on all",
      );
      const wait = {
        retry: { attempts: Number.POSITIVE_INFINITY, delay: 100, maxDelay: 10_000 },
        timeout: 40_000,
      };
      const done = waiters.map((lock) =>
        lock.acquire(wait).then((got) => ({ lock, got, at: performance.now() })),
      );
      await pause(1_000); // both waiting, subscribed, polling only as a safety net
      await raw[0]?.del(id); // member 0 forgets the holder's hold
      expect(await holder.release()).toBe(true); // announced on members 1 and 2
      const winner = await Promise.race(done);
      expect(winner.got).toBe(true);
      const second = done[waiters.indexOf(winner.lock) === 0 ? 1 : 0];
      await pause(500); // the other waiter is back to waiting
      await raw[forgets]?.del(id); // a member forgets the winner's hold
      const releasedAt = performance.now();
      expect(await winner.lock.release()).toBe(true); // announced on the two other members: a majority
      const woken = await second;
      expect({ got: woken?.got, woken: (woken?.at ?? 0) - releasedAt < WOKEN_WITHIN_MS }).toEqual({
        got: true,
        woken: true,
      });
      await woken?.lock.release();
    },
    60_000,
  );
});
