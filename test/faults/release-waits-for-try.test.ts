// Review helper-170 (stop 54, 6/6 on f407518): a release that waited for a slow same-uuid try past its lease
// left the older lease untold while another owner held the lock. A release tells it as it begins.
import { describe, expect, it } from "vitest";
import { useBothClients } from "./support/both-clients";
import { useWire } from "./support/endpoints";
import { lockKinds, sharedUuidCase } from "./support/shared-uuid";
import { pause, within } from "./support/time";

const { stack, ioredis, clients } = useBothClients();
const wire = useWire(() => stack().endpoint);
describe.each(lockKinds)("upstash wire %s", (_kind, Kind) => {
  it("F: L2 released while a slow try is in flight; L2's key expires, another owner takes it: L1 is told", async () => {
    const { id, uuid, lost, told } = sharedUuidCase("release-waits-for-try");
    const lock = new Kind({ id, redis: wire().faulty, lease: 1_000 });
    const other = new Kind({ id, redis: clients.upstash(), lease: 10_000 });
    expect(await lock.acquire({ uuid, onLost: told("L1") })).toBe(true);
    const l1 = lock.signal;
    expect(await lock.acquire({ uuid })).toBe(true); // L2, lease 1 s, no auto-extend
    wire().passThrough.faults.delayNext(1, 3_000); // the try reaches Redis 3 s late
    const later = lock.acquire({ uuid, lease: 30_000, retry: { attempts: 1 } });
    const released = lock.release();
    const r = await within(released, 5_000, "release"); // returns at L2's lease end
    await pause(300);
    expect(await other.acquire({ retry: { attempts: 20, delay: 100 } })).toBe(true);
    const whenOtherHolds = { lost: [...lost], aborted: l1.aborted, key: await ioredis().get(id) };
    const t = await within(later, 10_000, "later").catch((e: unknown) => String(e));
    await pause(200);
    const atEnd = { lost: [...lost], aborted: l1.aborted };
    await other.release();
    expect({ r, whenOtherHolds, t, atEnd }).toEqual({
      r: false,
      whenOtherHolds: { lost: ["L1 taken"], aborted: true, key: expect.not.stringMatching(uuid) },
      t: false,
      atEnd: { lost: ["L1 taken"], aborted: true },
    });
  }, 30_000);
});
