// A quorum Semaphore's `permit(uuid)` handle (a uuid handed over from another process) has no permit
// number: its status, extend and release scanned every permit on each member, so keys of the uuid on
// different permits on different members added up to a "majority" (review helper-26). With `limit` other
// holders each on a real majority of one permit, the handle said ACQUIRED (and extend true): limit + 1
// holders believed they held. A majority must now find it on one permit, which the handle then keeps.
import { describe, expect, it } from "vitest";
import { quorum, Semaphore } from "../../src/index";
import { uniqueId } from "../support/redis";
import { useHttpMembers } from "./support/members";

const members = useHttpMembers(3);

describe("quorum Semaphore.permit(uuid): the uuid on permit 1 of member 0, permit 2 of member 1", () => {
  it("is not ACQUIRED when no single permit holds it on a majority", async () => {
    const id = uniqueId("q-sem-seeded");
    const key = (n: number) => `{${id}}:permit:${n}`;
    const uuid = crypto.randomUUID();
    const [m0, m1, m2] = members();
    // Two real holders, each on a majority of its permit: Y on permit 1 (members 1, 2), Z on permit 2
    // (members 0, 2). Strays of the uuid: permit 1 on member 0 (say a failed round's leftover), permit 2 on
    // member 1.
    await m0?.direct.set(key(1), uuid, { px: 20_000 });
    await m1?.direct.set(key(1), "Y", { px: 20_000 });
    await m2?.direct.set(key(1), "Y", { px: 20_000 });
    await m0?.direct.set(key(2), "Z", { px: 20_000 });
    await m1?.direct.set(key(2), uuid, { px: 20_000 });
    await m2?.direct.set(key(2), "Z", { px: 20_000 });
    const semaphore = new Semaphore({
      id,
      redis: quorum(members().map((m) => m.faulty)),
      limit: 2,
      lease: 5_000,
    });
    // Sanity: the semaphore is full (Y and Z hold on majorities): nobody else may get a permit.
    expect(await semaphore.acquire({ retry: { attempts: 1 } })).toBeUndefined();
    const seeded = semaphore.permit(uuid);
    const status = await seeded.getStatus();
    const extended = await seeded.extend(0);
    await semaphore.pending;
    await Promise.all(members().map((m) => m.direct.del(key(1), key(2))));
    expect({ status, extended }).toEqual({ status: "FREE", extended: false });
  }, 30_000);
});
