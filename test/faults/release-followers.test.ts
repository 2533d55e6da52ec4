// Review helper-170 (stop 54): f407518 held a release's news back from the older leases of its uuid until
// the release was sent, after a same-uuid try in flight. A try that found the hold gone then handed them on
// untold (E: 24/24), and a "FREE" answer read meanwhile dropped them (D3: 12/12): misses worse than the
// false loss the delay was for. A release tells them as it begins; D, D2 and the controls held before too.
import { describe, expect, it } from "vitest";
import { FairLock, Lock } from "../../src/index";
import { uniqueId } from "../support/redis";
import { useBothClients } from "./support/both-clients";
import { pause, within } from "./support/time";

const { ioredis, clients } = useBothClients();
const kinds = [
  ["Lock", Lock],
  ["FairLock", FairLock],
] as const;
const names = ["ioredis", "upstash"] as const;

describe.each(names)("%s", (name) => {
  describe.each(kinds)("%s", (_kind, Kind) => {
    // D: L1 plain, L2 plain (L1 follows L2). The hold is lost (key deleted, another owner takes it). A try of
    // the uuid is in flight as L2 is released: the try is refused (another holder) and reports L2 lost, so
    // L2's release finds itself not releasable and never tells L1. The lock is another owner's; L1 untold.
    it("D: refused try in flight at the release: the older plain lease is told", async () => {
      const id = uniqueId("release-followers");
      const uuid = crypto.randomUUID();
      const lost: string[] = [];
      const lock = new Kind({ id, redis: clients[name](), lease: 5_000 });
      const other = new Kind({ id, redis: clients[name](), lease: 5_000 });
      expect(await lock.acquire({ uuid, onLost: (e) => lost.push(`L1 ${e.reason}`) })).toBe(true);
      const l1 = lock.signal;
      expect(await lock.acquire({ uuid })).toBe(true);
      await ioredis().del(id);
      expect(await other.acquire()).toBe(true);
      const later = lock.acquire({ uuid, retry: { attempts: 1 } });
      const released = lock.release();
      expect(await within(later, 5_000, "later")).toBe(false);
      expect(await within(released, 5_000, "release")).toBe(false);
      await pause(100);
      const seen = { lost, aborted: l1.aborted, otherHolds: (await ioredis().get(id)) !== uuid };
      await other.release();
      expect(seen).toEqual({ lost: ["L1 taken"], aborted: true, otherHolds: true });
    }, 20_000);

    // D2: as D, with a getStatus() of L2 in flight too: its "FREE" lands while L2's release waits for the try,
    // marks L2 gone, and the release, no longer releasable, returns without telling L1.
    it("D2: status answer and refused try in flight at the release: the older plain lease is told", async () => {
      const id = uniqueId("release-followers");
      const uuid = crypto.randomUUID();
      const lost: string[] = [];
      const lock = new Kind({ id, redis: clients[name](), lease: 5_000 });
      const other = new Kind({ id, redis: clients[name](), lease: 5_000 });
      expect(await lock.acquire({ uuid, onLost: (e) => lost.push(`L1 ${e.reason}`) })).toBe(true);
      const l1 = lock.signal;
      expect(await lock.acquire({ uuid })).toBe(true);
      await ioredis().del(id);
      expect(await other.acquire()).toBe(true);
      const status = lock.getStatus();
      const later = lock.acquire({ uuid, retry: { attempts: 1 } });
      const released = lock.release();
      expect(await within(status, 5_000, "status")).toBe("FREE");
      expect(await within(later, 5_000, "later")).toBe(false);
      expect(await within(released, 5_000, "release")).toBe(false);
      await pause(100);
      const seen = { lost, aborted: l1.aborted, otherHolds: (await ioredis().get(id)) !== uuid };
      await other.release();
      expect(seen).toEqual({ lost: ["L1 taken"], aborted: true, otherHolds: true });
    }, 20_000);

    // D0 (control): the same, with no release: the refused try tells L2 lost, and L1 with it.
    it("D0: control, no release", async () => {
      const id = uniqueId("release-followers");
      const uuid = crypto.randomUUID();
      const lost: string[] = [];
      const lock = new Kind({ id, redis: clients[name](), lease: 5_000 });
      const other = new Kind({ id, redis: clients[name](), lease: 5_000 });
      expect(await lock.acquire({ uuid, onLost: (e) => lost.push(`L1 ${e.reason}`) })).toBe(true);
      const l1 = lock.signal;
      expect(await lock.acquire({ uuid })).toBe(true);
      await ioredis().del(id);
      expect(await other.acquire()).toBe(true);
      expect(await within(lock.acquire({ uuid, retry: { attempts: 1 } }), 5_000, "later")).toBe(false);
      await pause(100);
      const seen = { lost, aborted: l1.aborted };
      await other.release();
      expect(seen).toEqual({ lost: ["L1 taken"], aborted: true });
    }, 20_000);

    // E: L1 plain, L2 plain. The hold vanishes (key deleted: a restart without persistence). A try of the uuid
    // in flight as L2 is released makes a new hold (kept false): L2, released, hands L1 on to it untold, so
    // L1 learns nothing of its lost hold while the new lease lives.
    it("E: try in flight at the release finds the hold gone: the older plain lease is told", async () => {
      const id = uniqueId("release-followers");
      const uuid = crypto.randomUUID();
      const lost: string[] = [];
      const lock = new Kind({ id, redis: clients[name](), lease: 5_000 });
      expect(await lock.acquire({ uuid, onLost: (e) => lost.push(`L1 ${e.reason}`) })).toBe(true);
      const l1 = lock.signal;
      expect(await lock.acquire({ uuid })).toBe(true);
      await ioredis().del(id);
      const later = lock.acquire({ uuid });
      const released = lock.release();
      expect(await within(later, 5_000, "later")).toBe(true);
      expect(await within(released, 5_000, "release")).toBe(false);
      await pause(100);
      const seen = { lost: [...lost], aborted: l1.aborted };
      await lock.release();
      expect(seen).toEqual({ lost: ["L1 taken"], aborted: true });
    }, 20_000);

    // E0 (control): the same with no release: L3's take finds L2's hold gone, L2 is lost, L1 with it.
    it("E0: control, no release", async () => {
      const id = uniqueId("release-followers");
      const uuid = crypto.randomUUID();
      const lost: string[] = [];
      const lock = new Kind({ id, redis: clients[name](), lease: 5_000 });
      expect(await lock.acquire({ uuid, onLost: (e) => lost.push(`L1 ${e.reason}`) })).toBe(true);
      const l1 = lock.signal;
      expect(await lock.acquire({ uuid })).toBe(true);
      await ioredis().del(id);
      expect(await within(lock.acquire({ uuid }), 5_000, "later")).toBe(true);
      await pause(100);
      const seen = { lost: [...lost], aborted: l1.aborted };
      await lock.release();
      expect(seen).toEqual({ lost: ["L1 taken"], aborted: true });
    }, 20_000);
  });
});

// D3 (upstash, through a wire): L2's getStatus() answers "FREE" (another owner holds) while L2's release
// waits for a same-uuid try in flight; the try, answered later, is refused. L1 is never told.
import { useWire } from "./support/endpoints";

const both = useBothClients();
const wire = useWire(() => both.stack().endpoint);
describe.each(kinds)("upstash wire %s", (_kind, Kind) => {
  it("D3: status FREE lands during the release's wait for a refused try: the older plain lease is told", async () => {
    const id = uniqueId("release-followers");
    const uuid = crypto.randomUUID();
    const lost: string[] = [];
    const lock = new Kind({ id, redis: wire().faulty, lease: 5_000 });
    const other = new Kind({ id, redis: both.clients.upstash(), lease: 5_000 });
    expect(await lock.acquire({ uuid, onLost: (e) => lost.push(`L1 ${e.reason}`) })).toBe(true);
    const l1 = lock.signal;
    expect(await lock.acquire({ uuid })).toBe(true);
    await both.ioredis().del(id);
    expect(await other.acquire()).toBe(true);
    const faults = wire().passThrough.faults;
    const before = wire().requests();
    faults.delayRepliesNext(1, 150); // the status
    const status = lock.getStatus();
    const deadline = Date.now() + 2_000;
    while (wire().requests() === before && Date.now() < deadline) await new Promise((r) => setImmediate(r));
    faults.delayRepliesNext(1, 600); // the try
    const later = lock.acquire({ uuid, retry: { attempts: 1 } });
    const released = lock.release();
    expect(await within(status, 5_000, "status")).toBe("FREE");
    expect(await within(later, 5_000, "later")).toBe(false);
    const r = await within(released, 5_000, "release");
    await pause(100);
    const seen = { r, lost, aborted: l1.aborted, otherHolds: (await both.ioredis().get(id)) !== uuid };
    await other.release();
    expect(seen).toEqual({ r: false, lost: ["L1 taken"], aborted: true, otherHolds: true });
  }, 20_000);
});
