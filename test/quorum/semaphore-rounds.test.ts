// A quorum semaphore whose every permit is held by others, two members slow (cross-region links): each
// round takes one slow round trip, and `limit` rounds ran one after another inside one try, which was cut
// off at about a lease (review helper-26). Every member answered every round ("held"), yet the acquisition
// read as an outage ("Redis did not answer"). Rounds now start only within half the lease.
import { describe, expect, it } from "vitest";
import { LockAcquisitionError, quorum, Semaphore } from "../../src/index";
import { uniqueId } from "../support/redis";
import { useHttpMembers } from "./support/members";

const members = useHttpMembers(3);

// Eight rounds of 400 ms outlast a 3 s lease; each member's 400 ms stays well within its wait (a third of the
// lease), also on a busy machine.
describe("quorum Semaphore: every permit held by others, two members 400 ms away", () => {
  it("reports contention (undefined / reason held), not an outage", async () => {
    const id = uniqueId("q-sem-budget");
    const limit = 8;
    // Every permit is held by other holders on every member.
    for (const { direct } of members())
      for (let n = 1; n <= limit; n++) await direct.set(`{${id}}:permit:${n}`, `other-${n}`, { px: 60_000 });
    // Warm each member's script cache outside the measured try.
    const redis = quorum(members().map((member) => member.faulty));
    const semaphore = new Semaphore({ id, redis, limit, lease: 3_000, retry: { attempts: 1 } });
    members()[1]?.passThrough.faults.latency(400);
    members()[2]?.passThrough.faults.latency(400);
    const outcome = await semaphore.acquireOrThrow().then(
      () => "acquired",
      (error: unknown) =>
        error instanceof LockAcquisitionError ? `${error.reason}: ${error.cause ?? ""}` : String(error),
    );
    await semaphore.pending;
    for (const { direct } of members())
      await direct.del(...Array.from({ length: limit }, (_, n) => `{${id}}:permit:${n + 1}`));
    expect(outcome).toBe("held: ");
  }, 30_000);
});
