// A quorum permit(uuid) handle pinned its permit per token in the store (ebe6712), until a release through
// this store or a "not held" answer (review helper-27). When the uuid's hold ended elsewhere and the uuid was
// taken again on another permit (a job retried under the same uuid), the pin was stale: status asked the old
// permit only (FREE), and release freed nothing. Each call now finds the permit a majority holds.
import { describe, expect, it } from "vitest";
import { quorum, Semaphore } from "../../src/index";
import { uniqueId } from "../support/redis";
import { useHttpMembers } from "./support/members";

const members = useHttpMembers(3);

async function setUp() {
  const id = uniqueId("q-sem-stale-pin");
  const key = (n: number) => `{${id}}:permit:${n}`;
  const uuid = crypto.randomUUID();
  const all = members();
  const monitor = new Semaphore({ id, redis: quorum(all.map((m) => m.faulty)), limit: 3, lease: 5_000 });
  // The worker (another process) holds `uuid` on permit 1 of every member.
  await Promise.all(all.map((m) => m.direct.set(key(1), uuid, { px: 20_000 })));
  // The monitor checks it (as docs/api.md's givePermitBack does first): pinned to permit 1.
  expect(await monitor.permit(uuid).getStatus()).toBe("ACQUIRED");
  // The worker releases it on its own Semaphore, then takes `uuid` again, landing on permit 2.
  await Promise.all(all.map((m) => m.direct.del(key(1))));
  await Promise.all(all.map((m) => m.direct.set(key(2), uuid, { px: 20_000 })));
  const cleanUp = () => Promise.all(all.map((m) => m.direct.del(key(1), key(2), key(3))));
  return { id, key, uuid, monitor, all, cleanUp };
}

describe("quorum Semaphore.permit(uuid) after the uuid moved to another permit", () => {
  it("getStatus() says ACQUIRED: the uuid holds permit 2 on every member", async () => {
    const { uuid, monitor, cleanUp } = await setUp();
    const status = await monitor.permit(uuid).getStatus();
    await monitor.pending;
    await cleanUp();
    expect(status).toBe("ACQUIRED");
  }, 30_000);

  it("release() frees the permit the uuid holds", async () => {
    const { uuid, monitor, all, key, cleanUp } = await setUp();
    const released = await monitor.permit(uuid).release();
    await monitor.pending;
    const left = await Promise.all(all.map((m) => m.direct.get(key(2))));
    await cleanUp();
    expect({ released, left }).toEqual({ released: true, left: [null, null, null] });
  }, 30_000);
});
