// A quorum lease's renewal that lands on the members after the lease was reported expired here (review
// helper-36). The acquire reached every member 1.2 s late, so Redis's lease outlives the local deadline; the
// first renewal is held 2.6 s on every member's wire, longer than a member's wait (a third of the lease): the
// round fails undecided, the lease expires here, and the renewals then set the key a full lease again on
// every member, held for nobody, while the next caller of the instance failed against it.
import { describe, expect, it, vi } from "vitest";
import { Lock, quorum, Semaphore } from "../../src/index";
import { pause, waitUntil } from "../faults/support/time";
import { uniqueId } from "../support/redis";
import { useHttpMembers } from "./support/members";

const members = useHttpMembers(3);

describe("a quorum renewal landing after the lease expired here", () => {
  it.each(["Lock", "Semaphore"] as const)(
    "%s: leaves no member holding, and the next caller gets it",
    async (kind) => {
      const all = members();
      const id = uniqueId(`quorum-late-renewal-${kind}`);
      const onLost = vi.fn();
      const redis = quorum(all.map((member) => member.faulty));
      const options = { id, redis, lease: 6_000, autoExtend: { interval: 4_000 }, onLost };
      const semaphore = kind === "Semaphore" ? new Semaphore({ ...options, limit: 1 }) : undefined;
      const lock = kind === "Lock" ? new Lock(options) : undefined;
      const key = semaphore ? `{${id}}:permit:1` : id;
      if (semaphore) await (await semaphore.acquire())?.release(); // warms the scripts on every member
      if (lock) await lock.acquire().then(() => lock.release());
      for (const member of all) member.passThrough.faults.delayNext(1, 1_200);
      const held = semaphore ? await semaphore.acquire({ retry: { attempts: 1 } }) : await lock?.acquire();
      expect(semaphore ? held !== undefined : held).toBe(true); // a lease (Semaphore) or true (Lock)
      for (const member of all) member.passThrough.faults.delayNext(1, 2_600);
      await waitUntil(() => onLost.mock.calls.length > 0, "the lease reported lost", { timeoutMs: 15_000 });
      await new Promise((r) => setTimeout(r, 20));
      await pause(3_000); // the renewals landed (held 2.6 s from ~4 s)
      await (semaphore ?? lock)?.pending;
      const heldOn = await Promise.all(all.map((member) => member.direct.get(key)));
      const next = semaphore
        ? await semaphore.acquire({ timeout: 2_000 })
        : await lock?.acquire({ timeout: 2_000 });
      if (next) await (typeof next === "object" ? next.release() : lock?.release());
      expect({ lost: onLost.mock.calls.map(([error]) => error.reason), heldOn, next: Boolean(next) }).toEqual(
        {
          lost: ["expired"],
          heldOn: [null, null, null],
          next: true,
        },
      );
    },
  );
});
