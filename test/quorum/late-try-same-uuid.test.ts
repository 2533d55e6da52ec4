// B4's fix on a quorum (review helper-216): a member answering that a later try of the uuid holds ({0, -3})
// sends the round again at once, off the attempts; bounded, and the hold stands where it should.
import { describe, expect, it } from "vitest";
import { Lock, quorum } from "../../src/index";
import { companionKey } from "../../src/keys";
import { uniqueId } from "../support/redis";
import { takerAhead } from "../support/taker-ahead";
import { useHttpMembers } from "./support/members";

const members = useHttpMembers(3);
const faulty = () => quorum(members().map((member) => member.faulty));
const LEASE_MS = 20_000;
const requests = () => members().reduce((sum, { passThrough }) => sum + passThrough.stats.requests, 0);

/** Seeds `id` on member `index`: held by `token`, by a try of a clock `aheadMs` ahead when it is `uuid`'s. */
async function seed(index: number, id: string, token: string, aheadMs: number): Promise<void> {
  const member = members()[index];
  if (!member) throw new Error(`no member ${index}`);
  const { direct } = member;
  await direct.set(id, token, { px: LEASE_MS });
  const taker = takerAhead(aheadMs);
  await direct.set(companionKey(id, ":grant"), taker, { px: LEASE_MS });
}

describe("a quorum try of a uuid that a later try holds on some members", () => {
  it("takes the free member beside two told so, in one round more", async () => {
    const id = uniqueId("quorum-after");
    const uuid = crypto.randomUUID();
    await seed(0, id, uuid, 10_000);
    await seed(1, id, uuid, 20_000);
    const before = requests();
    const lock = new Lock({ id, redis: faulty(), lease: LEASE_MS });
    expect(await lock.acquire({ uuid, retry: { attempts: 1 }, timeout: 5_000 })).toBe(true);
    // Two rounds of three, and the undo of the first round's take of the free member.
    expect(requests() - before).toBeLessThanOrEqual(7);
    expect(await lock.release()).toBe(true);
    for (const { direct } of members()) expect(await direct.get(id)).toBeNull();
  });

  it("is refused beside two other holders, sending the round once more only", async () => {
    const id = uniqueId("quorum-after-held");
    const uuid = crypto.randomUUID();
    await seed(0, id, uuid, 10_000);
    await seed(1, id, "another", 0);
    await seed(2, id, "another", 0);
    const before = requests();
    const lock = new Lock({ id, redis: faulty(), lease: LEASE_MS });
    expect(await lock.acquire({ uuid, retry: { attempts: 1 }, timeout: 5_000 })).toBe(false);
    expect(requests() - before).toBeLessThanOrEqual(7);
    const [first] = members();
    expect(await first?.direct.get(id)).toBe(uuid); // the later try's hold stands there
    expect(await first?.direct.pttl(id)).toBeGreaterThan(0);
  });
});

// Review helper-218: counted as a no beside a member that failed, the refusal read as an outage, and one
// member down failed an acquisition that a majority grants (3/3).
describe("a quorum try of a uuid that a later try holds on one member, another member down", () => {
  it("acquires with the free member, sending the round again, not failing as an outage", async () => {
    const id = uniqueId("quorum-after-down");
    const uuid = crypto.randomUUID();
    const [first, down] = members();
    if (!first || !down) throw new Error("no members");
    await first.direct.set(id, uuid, { px: LEASE_MS });
    const taker = takerAhead();
    await first.direct.set(companionKey(id, ":grant"), taker, { px: LEASE_MS });
    down.passThrough.faults.refuse(); // every request: that member is down
    const lock = new Lock({ id, redis: faulty(), lease: LEASE_MS });
    expect(await lock.acquire({ uuid, retry: { attempts: 1 }, timeout: 5_000 })).toBe(true);
    down.passThrough.faults.reset();
    expect(await lock.release()).toBe(true);
  });
});
