// A quorum permit(uuid) handle finds the permit a majority holds by a look round (review helper-29). The round
// was a vote on "held" (any permit), settled once a majority said held: a uuid holding permit 2 on members 1
// and 2 with a leftover on permit 1 of member 0 read FREE (or, renewing, lost) whenever member 0 and one
// other answered first. The round now waits until one permit has a majority, or none can.
import { describe, expect, it } from "vitest";
import { quorum, Semaphore } from "../../src/index";
import { pause } from "../faults/support/time";
import { uniqueId } from "../support/redis";
import { useHttpMembers } from "./support/members";

const members = useHttpMembers(3);
type Member = ReturnType<typeof members>[number];

describe("quorum Semaphore.permit(uuid) while a slow member completes the majority", () => {
  it("getStatus() says ACQUIRED: permit 2 is held on members 1 and 2", async () => {
    const id = uniqueId("q-early-vote");
    const key = (n: number) => `{${id}}:permit:${n}`;
    const uuid = crypto.randomUUID();
    const all = members() as [Member, Member, Member];
    const sem = new Semaphore({ id, redis: quorum(all.map((m) => m.faulty)), limit: 3, lease: 5_000 });
    await all[0].direct.set(key(1), uuid, { px: 20_000 }); // a failed round's leftover
    await all[1].direct.set(key(2), uuid, { px: 20_000 });
    await all[2].direct.set(key(2), uuid, { px: 20_000 });
    all[2].passThrough.faults.latency(300); // member 2 answers last (well within a third of the lease)
    const status = await sem.permit(uuid).getStatus();
    all[2].passThrough.faults.reset();
    await sem.pending;
    const held = await Promise.all(all.map((m) => m.direct.get(key(2))));
    await Promise.all(all.map((m) => m.direct.del(key(1), key(2), key(3))));
    expect({ status, held }).toEqual({ status: "ACQUIRED", held: [null, uuid, uuid] });
  }, 30_000);

  it("an auto-extended handle is not reported lost while its permit holds on a majority", async () => {
    const id = uniqueId("q-early-vote-renew");
    const key = (n: number) => `{${id}}:permit:${n}`;
    const uuid = crypto.randomUUID();
    const all = members() as [Member, Member, Member];
    const sem = new Semaphore({
      id,
      redis: quorum(all.map((m) => m.faulty)),
      limit: 3,
      lease: 3_000,
      autoExtend: { interval: 300 },
    });
    await all[0].direct.set(key(1), uuid, { px: 20_000 }); // a failed round's leftover
    await all[1].direct.set(key(2), uuid, { px: 20_000 });
    await all[2].direct.set(key(2), uuid, { px: 20_000 });
    all[0].passThrough.faults.latency(200); // members 1 and 2 answer first: permit 2 found
    const handle = sem.permit(uuid);
    const status = await handle.getStatus();
    all[0].passThrough.faults.reset();
    all[2].passThrough.faults.latency(200); // now member 2 answers last
    await pause(1_200); // a few renewals
    const lostReason = handle.signal.aborted
      ? (handle.signal.reason as { reason?: string }).reason
      : undefined;
    all[2].passThrough.faults.reset();
    const held = await Promise.all(all.map((m) => m.direct.get(key(2))));
    await handle.release().catch(() => false);
    await sem.pending;
    await Promise.all(all.map((m) => m.direct.del(key(1), key(2), key(3))));
    expect({ status, lostReason, held }).toEqual({
      status: "ACQUIRED",
      lostReason: undefined,
      held: [null, uuid, uuid],
    });
  }, 30_000);
});
