// Review helper-140 (stop 51, 5/5): three callers of one Lock. The first's first try found the lock held,
// then Redis went silent: its second try was cut off by its timeout. The second caller then took the turn and
// sent a try, also unanswered; the third only waited for the turn, from after the first's silent try went out.
// The third failed as "held", with no cause: the instance remembered only when the turn's newest try went
// (the second caller's, after the third began), so the silence of the first caller's try, still unanswered,
// was forgotten once that caller's wait ended. The silence lasts until Redis answers one of the turn's tries.
//
// Review helper-143 (stop 51, 5/5 on each of five setups): a try of the turn's that later timed out (a
// client's `commandTimeout`, a quorum member's bound) counted as answered, so the waiter, every server frozen
// all through its wait, again failed with no cause. A timeout is no answer.
import type { Redis as IoRedis } from "ioredis";
import { describe, expect, it } from "vitest";
import { Lock, LockAcquisitionError, LockRedisError, quorum } from "../../src/index";
import { useMembers } from "../quorum/support/members";
import { uniqueId } from "../support/redis";
import { usePrivateStack, useWire } from "./support/endpoints";
import { pause, waitUntil } from "./support/time";

const stack = usePrivateStack();
const wire = useWire(() => stack().endpoint);

describe("a caller that only waited for the turn while Redis answered none of the turn's tries", () => {
  it("is told of the silence, after the turn passed from a caller whose try was cut off", async () => {
    const id = uniqueId("turn-silence");
    await wire().direct.set(id, "another holder", { px: 10_000 });
    const lock = new Lock({ id, redis: wire().faulty, lease: 3_000 });
    const { stats, faults } = wire().passThrough;
    const answered = stats.responses;
    const first = lock.acquire({ timeout: 1_000, retry: { delay: 100 } });
    await waitUntil(() => stats.responses > answered, "the first try answered");
    faults.latency(3_000); // Redis silent from now on: the first caller's next try goes unanswered
    // Registered before the third, so it takes the turn when the first caller's wait ends, and sends a try.
    const second = lock.acquireOrThrow({ timeout: 2_500, retry: { delay: 1_000 } }).catch((e: unknown) => e);
    await pause(300); // the first caller's second try is out
    const third = await lock
      .acquireOrThrow({ retry: { attempts: 3, delay: 500 } })
      .catch((error: unknown) => error);
    const results = [await first, await second];
    faults.reset();
    expect(results).toEqual([false, expect.any(LockAcquisitionError)]);
    expect(third).toBeInstanceOf(LockAcquisitionError);
    const failure = third as LockAcquisitionError;
    expect({
      reason: failure.reason,
      cause: failure.cause instanceof LockRedisError,
      message: /was acquiring it, and Redis did not answer/.test(failure.message),
    }).toEqual({ reason: "held", cause: true, message: true });
    await lock.pending;
  }, 15_000);
});

type LockRedis = ConstructorParameters<typeof Lock>[0]["redis"];

describe("a caller that only waited for the turn while every server was frozen", () => {
  const members = useMembers(3);
  const setups: Record<string, () => { redis: LockRedis; clients: IoRedis[] }> = {
    "one ioredis client with a 2 s commandTimeout": () => {
      const clients = members.connect(1, { commandTimeout: 2_000 });
      return { redis: clients[0] as IoRedis, clients };
    },
    "a quorum of three, each member waited for 2 s": () => {
      const clients = members.connect(3);
      return { redis: quorum(clients), clients };
    },
  };
  it.each(Object.keys(setups))(
    "%s: is told of the silence after the turn's cut-off try timed out",
    async (setup) => {
      const { redis, clients } = setups[setup]?.() ?? { redis: undefined as never, clients: [] };
      const id = uniqueId("turn-silence-frozen");
      const lock = new Lock({ id, redis, lease: 6_000 }); // a member, or the client, waits 2 s at most
      await lock.getStatus(); // the scripts are loaded
      for (const client of clients) await client.set(id, "another holder", "PX", 60_000);
      const startedAt = performance.now();
      // Its first try finds the lock held; its second, at 300 ms, is never answered: its timeout cuts that off
      // at 800 ms, and the request times out at 2.3 s.
      const first = lock.acquire({ timeout: 800, retry: { delay: 300 } });
      // Registered next: it takes the turn at 800 ms, and sends a try that times out at 2.8 s.
      const second = lock.acquire({ timeout: 6_000, retry: { delay: 3_000 } }).catch((e: unknown) => e);
      await pause(150);
      for (const server of members.servers()) server.freeze();
      await pause(Math.max(0, startedAt + 450 - performance.now()));
      // Waits for the turn only, from after the first caller's unanswered try went, to about 2.5 s.
      const third = await lock.acquireOrThrow({ timeout: 2_100 }).catch((error: unknown) => error);
      for (const server of members.servers()) server.thaw();
      expect(await first).toBe(false);
      await second;
      await lock.pending;
      expect(third).toBeInstanceOf(LockAcquisitionError);
      const failure = third as LockAcquisitionError;
      expect({ reason: failure.reason, cause: failure.cause instanceof LockRedisError }).toEqual({
        reason: "timeout",
        cause: true,
      });
    },
    20_000,
  );
});
