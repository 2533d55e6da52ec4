// Review helper-159 (stop 53; 12/12 Lock and FairLock, 4/4 Semaphore, over ioredis and @upstash/redis): an
// outer acquisition of a uuid lost its hold in Redis (a restart without persistence; here, the key deleted),
// another process took the lock and released it, and then a nested acquisition of the same uuid made a new
// hold. The outer lease was handed over to it as though its hold had lived on: its caller, still at work,
// was never told that another owner had held the lock meanwhile. A take now says whether it found its
// token holding; one that made a new hold tells an older lease of the token here that it lost its hold.
import { describe, expect, it } from "vitest";
import { FairLock, Lock, Semaphore } from "../../src/index";
import { companionKey } from "../../src/keys";
import { uniqueId } from "../support/redis";
import { useBothClients } from "./support/both-clients";
import { waitUntil } from "./support/time";

const { ioredis, clients } = useBothClients();

describe.each(["ioredis", "upstash"] as const)("%s", (name) => {
  it.each([
    ["Lock", Lock],
    ["FairLock", FairLock],
  ] as const)(
    "%s: an outer hold lost, then taken and released elsewhere, is told lost",
    async (_kind, Kind) => {
      const id = uniqueId("nested-take-after-loss");
      const uuid = crypto.randomUUID();
      const lost: string[] = [];
      const lock = new Kind({ id, redis: clients[name](), lease: 10_000 });
      const other = new Kind({ id, redis: clients[name](), retry: { attempts: 1 } });
      const seen = await lock.runExclusive(
        async (signal) => {
          await ioredis().del(id); // gone unseen here (a restart without persistence, say)
          const otherGot = await other.acquire();
          await other.release();
          const inner = await lock.runExclusive(async (innerSignal) => innerSignal.aborted, {
            uuid,
            onLost: () => lost.push("inner"),
          });
          return {
            otherGot,
            inner,
            aborted: signal.aborted,
            reason: (signal.reason as { reason?: string })?.reason,
          };
        },
        { uuid, onLost: (error) => lost.push(`outer ${error.reason}`) },
      );
      expect({ ...seen, lost, key: await ioredis().get(id) }).toEqual({
        otherGot: true,
        inner: false,
        aborted: true,
        reason: "taken",
        lost: ["outer taken"],
        key: null,
      });
    },
  );

  it("the nested take kept the hold (the control): nobody is told a loss", async () => {
    const id = uniqueId("nested-take-kept");
    const uuid = crypto.randomUUID();
    const lost: string[] = [];
    const lock = new Lock({ id, redis: clients[name](), lease: 10_000 });
    const aborted = await lock.runExclusive(
      async (signal) => {
        await lock.runExclusive(async () => {}, { uuid, onLost: () => lost.push("inner") });
        return signal.aborted;
      },
      { uuid, onLost: () => lost.push("outer") },
    );
    expect({ aborted, lost }).toEqual({ aborted: false, lost: [] });
  });

  it.each([false, true])("Semaphore (fair: %s): the same for a permit", async (fair) => {
    const id = uniqueId("nested-take-after-loss-sem");
    const uuid = crypto.randomUUID();
    const lost: string[] = [];
    const semaphore = new Semaphore({ id, redis: clients[name](), limit: 1, fair, lease: 10_000 });
    const other = new Semaphore({ id, redis: clients[name](), limit: 1, fair, retry: { attempts: 1 } });
    const outer = await semaphore.acquireOrThrow({
      uuid,
      onLost: (error) => lost.push(`outer ${error.reason}`),
    });
    await ioredis().del(`{${id}}:permit:1`);
    const taken = await other.acquire();
    await taken?.release();
    const inner = await semaphore.acquireOrThrow({ uuid, onLost: () => lost.push("inner") });
    const seen = { taken: taken !== undefined, outer: outer.signal.aborted, inner: inner.signal.aborted };
    await inner.release();
    await outer.release();
    expect({ ...seen, lost }).toEqual({ taken: true, outer: true, inner: false, lost: ["outer taken"] });
  });
});

// Review helper-163 (stop 53), on the first version of the fix: a FairLock waiter that found another owner
// holding, then got the lock from that owner's release at its next poll, read its token holding ("kept"):
// the outer lease lost meanwhile was not told (0/4). An acquisition that met another holder kept nothing.
describe.each(["ioredis", "upstash"] as const)("%s, polling", (name) => {
  it("FairLock: a nested wait handed the lock by another owner's release tells the outer lease", async () => {
    const id = uniqueId("nested-take-after-wait");
    const uuid = crypto.randomUUID();
    const lock = new FairLock({ id, redis: clients[name](), lease: 10_000, wakeOnRelease: false });
    const other = new FairLock({ id, redis: clients[name](), retry: { attempts: 1 } });
    const seen = await lock.runExclusive(
      async (signal) => {
        await ioredis().del(id); // gone unseen here
        const otherGot = await other.acquire();
        const inner = lock.runExclusive(async () => "ran", { uuid, retry: { attempts: 100, delay: 50 } });
        await waitUntil(
          async () => (await ioredis().zcard(companionKey(id, ":queue"))) === 1,
          "the inner acquisition in line behind `other`",
        );
        await other.release(); // hands the key to the uuid's waiter, which finds it at its next poll
        return { otherGot, inner: await inner, aborted: signal.aborted };
      },
      { uuid },
    );
    expect(seen).toEqual({ otherGot: true, inner: "ran", aborted: true });
  });
});
