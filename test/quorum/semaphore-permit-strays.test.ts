// As semaphore-permit-handle.test.ts, from a real failed acquisition instead of planted keys (review
// helper-26): a try of uuid U finds the
// semaphore full (Y holds permit 1 on members 1+2, Z permit 2 on members 0+2) and fails; its rounds left
// U on permit 1 of member 0 and on permit 2 of member 1 (their replies slow, so not yet undone). A process
// handed U checks `permit(U).getStatus()` in that window: the permit-less scan counted the two strays as a
// majority, answered ACQUIRED and confirmed both strays ("*"), so the rounds' undos no longer freed them;
// with auto-extend the handle renewed them past every lease. Y, Z and U's handle: 3 holders, limit 2.
import { afterEach, describe, expect, it, vi } from "vitest";
import { quorum, Semaphore } from "../../src/index";
import { pause } from "../faults/support/time";
import { uniqueId } from "../support/redis";
import { useHttpMembers } from "./support/members";

const members = useHttpMembers(3);

describe("quorum Semaphore: a seeded permit(uuid) checked while a failed try's rounds are being undone", () => {
  afterEach(() => vi.restoreAllMocks());

  it("does not count strays on different permits as a hold, nor keep them past their lease", async () => {
    const id = uniqueId("q-sem-strays");
    const key = (n: number) => `{${id}}:permit:${n}`;
    const uuid = crypto.randomUUID();
    const [m0, m1, m2] = members() as [
      ReturnType<typeof members>[number],
      ReturnType<typeof members>[number],
      ReturnType<typeof members>[number],
    ];
    const faulty = quorum(members().map((m) => m.faulty));
    // Warm the scripts on every member through the faulty clients, on another id. Tries enough to outlast
    // a busy machine's slow replies (it failed once, 2 of 3 members past 500 ms, beside other test runs).
    const warm = new Semaphore({ id: `${id}:warm`, redis: faulty, limit: 2, lease: 1_500 });
    await (await warm.acquireOrThrow({ retry: { attempts: 20, delay: 100 } })).release();
    await warm.pending;
    // Y on permit 1 (members 1, 2), Z on permit 2 (members 0, 2): the semaphore is full.
    await m1.direct.set(key(1), "Y", { px: 30_000 });
    await m2.direct.set(key(1), "Y", { px: 30_000 });
    await m0.direct.set(key(2), "Z", { px: 30_000 });
    await m2.direct.set(key(2), "Z", { px: 30_000 });
    // Process 1 tries uuid U, rounds from permit 1 then 2. Member 0's first reply (round 1's grant) and
    // member 1's second reply (round 2's grant) are slow: each round fails on the other two at once.
    vi.spyOn(Math, "random").mockReturnValue(0);
    m0.passThrough.faults.delayRepliesNext(1, 1_000);
    m1.passThrough.faults.delayRepliesNext(1, 0);
    m1.passThrough.faults.delayRepliesNext(1, 1_000);
    const p1 = new Semaphore({ id, redis: faulty, limit: 2, lease: 1_500, retry: { attempts: 1 } });
    expect(await p1.acquire({ uuid })).toBeUndefined();
    vi.restoreAllMocks();
    // Process 2, handed U, checks it (its own clients), with auto-extend on.
    const p2 = new Semaphore({
      id,
      redis: quorum(members().map((m) => m.direct)),
      limit: 2,
      lease: 1_500,
      autoExtend: { interval: 300 },
    });
    const handle = p2.permit(uuid);
    const status = await handle.getStatus();
    await p1.pending; // the slow replies came, and the rounds' undos ran
    await pause(3_200); // more than two leases
    const strays = [await m0.direct.get(key(1)), await m1.direct.get(key(2))];
    const believes = !handle.signal.aborted && handle.remainingMs > 0;
    await handle.release().catch(() => false);
    await p2.pending;
    await Promise.all(members().map((m) => m.direct.del(key(1), key(2))));
    expect({ status, believes, strays }).toEqual({ status: "FREE", believes: false, strays: [null, null] });
  }, 30_000);
});
