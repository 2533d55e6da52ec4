// A failed minority of a quorum (review helper-31): a member that refuses every request, or whose key is of
// another type, fails like a member that is down. The majority decides: contention is still waited out, and
// auto-extend keeps a hold that a majority keeps.
import { Redis as IoRedis } from "ioredis";
import { describe, expect, it } from "vitest";
import { Lock, type LockLostError, quorum } from "../../src/index";
import { uniqueId } from "../support/redis";
import { useMembers } from "./support/members";

const members = useMembers(3);

describe("a quorum of 3 whose member 0 refuses everything (an ACL without EVAL)", () => {
  it("waits out another owner's hold on member 1 within its timeout, as with member 0 down", async () => {
    const [first] = members.servers().map((server) => server.port);
    const [admin] = members.connect(1);
    await admin?.call("ACL", "SETUSER", "no-scripts", "on", "nopass", "~*", "+@all", "-eval", "-evalsha");
    const refusing = new IoRedis(first as number, "127.0.0.1", { username: "no-scripts", password: "" });
    refusing.on("error", () => {});
    try {
      const [, holder, free] = members.connect(3);
      const id = uniqueId("quorum-refusing-minority");
      await holder?.set(id, "another-owner", "PX", 400);
      const lock = new Lock({ id, redis: quorum([refusing, holder, free] as IoRedis[]), lease: 5_000 });
      // Before the fix: "1 of 3 instances failed: #0: Redis refused ... NOPERM", refused, at once.
      expect(await lock.acquire({ timeout: 5_000 })).toBe(true);
      expect(await lock.release()).toBe(true);
    } finally {
      refusing.disconnect();
    }
  });

  it("still reports a refusal at once when refusals leave no majority", async () => {
    const [admin] = members.connect(1);
    await admin?.call("ACL", "SETUSER", "no-scripts", "on", "nopass", "~*", "+@all", "-eval", "-evalsha");
    const ports = members.servers().map((server) => server.port);
    const refusing = ports.slice(0, 2).map((port) => {
      const client = new IoRedis(port, "127.0.0.1", { username: "no-scripts", password: "" });
      client.on("error", () => {});
      return client;
    });
    try {
      const [, , free] = members.connect(3);
      const lock = new Lock({
        id: uniqueId("quorum-refusing-majority"),
        redis: quorum([...refusing, free] as IoRedis[]),
      });
      await expect(lock.acquire({ timeout: 5_000 })).rejects.toMatchObject({ refused: true });
    } finally {
      for (const client of refusing) client.disconnect();
    }
  });
});

describe("auto-extend on a quorum of 3 whose member 0's key is of another type (WRONGTYPE)", () => {
  it("keeps the hold through a renewal that member 2, frozen briefly, left undecided", async () => {
    const [wrongType, first, second] = members.connect(3);
    const id = uniqueId("quorum-wrongtype-minority");
    await wrongType?.sadd(id, "not-a-lock");
    const lost: LockLostError[] = [];
    const lock = new Lock({
      id,
      redis: quorum([wrongType, first, second] as IoRedis[]),
      lease: 6_000,
      autoExtend: true,
      onLost: (error) => lost.push(error),
    });
    expect(await lock.acquire()).toBe(true);
    // The first renewal goes at about 2 s and waits for member 2 a third of the lease (to about 4 s): member 2
    // stays frozen past that, then thaws 1.6 s before the lease's end, for the retried renewal.
    const frozen = members.servers()[2];
    await new Promise((resolve) => setTimeout(resolve, 1_600));
    frozen?.freeze();
    await new Promise((resolve) => setTimeout(resolve, 2_800));
    frozen?.thaw();
    // Before the fix: lost as "taken" while members 1 and 2 held the token (one member's WRONGTYPE).
    expect(lost.map((error) => error.reason)).toEqual([]);
    expect([await first?.get(id), await second?.get(id)]).toEqual([expect.any(String), expect.any(String)]);
    expect(await lock.release()).toBe(true);
  });
});
