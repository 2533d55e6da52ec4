// An abandoned try undone while another token holds the key (review helper-33). The try's request is cut at
// the client (its caller gives up and undoes it) yet reaches Redis 1.5 s later, once that other hold is gone.
// The undo named the try only while the key was free, so the late copy took the lock for a lease, for nobody.
// Two requests are cut: fetch re-sends a request whose kept-alive connection closed, and a re-send that
// reached Redis would answer "held" (nothing to undo, a case no undo covers: see docs/keys.md).
import { describe, expect, it } from "vitest";
import { Lock, quorum } from "../../src/index";
import { useHttpMembers } from "../quorum/support/members";
import { uniqueId } from "../support/redis";
import { pause } from "./support/time";

const members = useHttpMembers(3);

/** Longer than the pass-through holds the copy (1.5 s), with room for a busy machine. */
const COPY_LANDED_MS = 3_000;

describe("a try undone while another owner holds, its request landing after that hold", () => {
  it("on one server takes nothing", async () => {
    const [member] = members();
    if (!member) throw new Error("no member");
    const id = uniqueId("undo-under-holder");
    const lock = new Lock({ id, redis: member.faulty, lease: 5_000, retry: { attempts: 1 } });
    expect(await lock.acquire()).toBe(true); // warms the scripts
    expect(await lock.release()).toBe(true);
    await member.direct.set(id, "another-owner", { px: 500 });
    member.passThrough.faults.ghostNext(2, 1_500);
    await expect(lock.acquire()).rejects.toThrow(/could not be reached/);
    await lock.pending; // the undo was answered
    await pause(COPY_LANDED_MS);
    expect(await member.direct.get(id)).toBeNull();
  });

  it("on a quorum member, beside a round that succeeded and was released, takes nothing", async () => {
    const all = members();
    const id = uniqueId("undo-under-holder-quorum");
    const lock = new Lock({ id, redis: quorum(all.map((member) => member.faulty)), lease: 5_000 });
    expect(await lock.acquire()).toBe(true);
    expect(await lock.release()).toBe(true);
    await all[2]?.direct.set(id, "another-owner", { px: 500 });
    all[2]?.passThrough.faults.ghostNext(2, 1_500);
    expect(await lock.acquire()).toBe(true);
    expect(await lock.release()).toBe(true);
    await lock.pending;
    await pause(COPY_LANDED_MS);
    expect(await Promise.all(all.map((member) => member.direct.get(id)))).toEqual([null, null, null]);
  });
});
