// Review helper-136 (stop 50, 24/24 runs: Lock and FairLock, over @upstash/redis and ioredis, the lease run
// out or Redis restarted): an instance whose `acquire({ uuid })` lease was lost replaced it with a seed of the
// uuid, which acts on any hold of it. Another process had taken the uuid again (a re-run of the same job):
// the first instance's `release()` deleted that newer hold, and a third process took the lock while the
// second still held it. A lease released by its holder ends only its own hold; only a lock seeded with a
// uuid (`new Lock({ uuid })`) acts on any hold of it.
//
// Review helper-139 (stop 50, by reading), confirmed here: such a lost lease's `getStatus()` asked about any
// hold of the uuid and answered "ACQUIRED" for the re-run's hold, while its `extend()` said false: code that
// checks the status before going on with its work would have run beside the re-run.
import { describe, expect, it } from "vitest";
import { FairLock, type Lease, Lock, Semaphore } from "../../src/index";
import { uniqueId } from "../support/redis";
import { useBothClients } from "./support/both-clients";
import { pause } from "./support/time";

const { stack, clients } = useBothClients();

describe.each(["ioredis", "upstash"] as const)("%s", (name) => {
  describe.each([
    ["Lock", Lock],
    ["FairLock", FairLock],
  ] as const)("%s", (_kind, Kind) => {
    it.each(["its lease ran out", "Redis restarted without persistence"] as const)(
      "once its lease of a uuid was lost (%s), its release leaves another process's newer hold of it alone",
      async (how) => {
        const id = uniqueId("lost-uuid-release");
        const uuid = crypto.randomUUID();
        // 2 s: an acquire's bound is its lease, and a first request over a cold @upstash/redis client
        // missed 1 s on a loaded machine (the third loaded run of 2026-12-06).
        const first = new Kind({ id, redis: clients[name](), lease: 2_000 });
        expect(await first.acquire({ uuid })).toBe(true);
        if (how === "its lease ran out") await pause(2_200);
        else await stack().redis.restart();
        const rerun = new Kind({ id, redis: clients[name](), lease: 10_000 });
        expect(await rerun.acquire({ uuid, timeout: 3_000 })).toBe(true);
        await pause(2_100); // the first lease's local deadline surely passed
        expect(first.signal.aborted).toBe(true);
        const released = await first.release();
        const third = await new Lock({ id, redis: clients[name](), retry: { attempts: 1 } }).acquire();
        const rerunHolds = await rerun.getStatus();
        await rerun.release();
        expect({ released, third, rerunHolds }).toEqual({
          released: false,
          third: false,
          rerunHolds: "ACQUIRED",
        });
      },
      20_000,
    );
  });
});

describe.each(["ioredis", "upstash"] as const)("%s: a lost lease of a uuid", (name) => {
  type Held = Pick<Lease, "getStatus" | "extend" | "release">;
  // Each takes the uuid with the lease given and returns what holds it (the lock, or the semaphore's lease).
  const kinds: Record<string, (id: string, uuid: string, lease: number) => Promise<Held | undefined>> = {
    Lock: async (id, uuid, lease) => {
      const lock = new Lock({ id, redis: clients[name](), lease });
      return (await lock.acquire({ uuid, timeout: 3_000 })) ? lock : undefined;
    },
    FairLock: async (id, uuid, lease) => {
      const lock = new FairLock({ id, redis: clients[name](), lease });
      return (await lock.acquire({ uuid, timeout: 3_000 })) ? lock : undefined;
    },
    Semaphore: (id, uuid, lease) =>
      new Semaphore({ id, redis: clients[name](), lease, limit: 2 }).acquire({ uuid, timeout: 3_000 }),
  };
  it.each(Object.keys(kinds))(
    "%s: reads another process's newer hold of it as not its own",
    async (kind) => {
      const id = uniqueId("lost-uuid-status");
      const uuid = crypto.randomUUID();
      const first = await kinds[kind]?.(id, uuid, 2_000); // 2 s: as the first case's, for a loaded machine
      await pause(2_200);
      const rerun = await kinds[kind]?.(id, uuid, 10_000);
      if (!first || !rerun) throw new Error("expected both to acquire");
      const status = await first.getStatus();
      const extended = await first.extend(1_000);
      const rerunStatus = await rerun.getStatus();
      await rerun.release();
      expect({ status, extended, rerunStatus }).toEqual({
        status: "FREE",
        extended: false,
        rerunStatus: "ACQUIRED",
      });
    },
    20_000,
  );
});
