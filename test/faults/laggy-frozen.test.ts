// Review helper-127 (stop 49, 4/4): Redis frozen (SIGSTOP) while this process's event loop lagged past half
// a lease on every try. Each try settled "overdue", was taken for a stall of this process and sent again off
// the attempts budget: with no timeout the acquisition never ended, each try queued for when Redis woke.
import type { Redis as IoRedis } from "ioredis";
import { beforeAll, describe, expect, it } from "vitest";
import { Lock } from "../../src/index";
import { useRedisServer } from "../support/own-server";
import { uniqueId } from "../support/redis";
import { pause } from "./support/time";

const sab = new Int32Array(new SharedArrayBuffer(4));
const block = (ms: number) => Atomics.wait(sab, 0, 0, ms);
const own = useRedisServer();
let client: IoRedis;
beforeAll(() => {
  client = own.connect();
});

describe("ioredis, Redis frozen, the event loop lagging 350 ms every 20 ms", () => {
  it("the second overdue try while the first is unanswered is Redis's silence: it fails so", async () => {
    const lock = new Lock({
      id: uniqueId("laggy-frozen"),
      redis: client,
      lease: 200,
      retry: { attempts: 3 },
    });
    expect(await lock.acquire({ lease: 5_000 })).toBe(true); // connected, script loaded (no 200 ms bound)
    await lock.release();
    let tries = 0;
    const evalsha = client.evalsha.bind(client);
    client.evalsha = ((...args: Parameters<typeof evalsha>) => {
      tries += 1;
      return evalsha(...args);
    }) as typeof client.evalsha;
    own.server().freeze();
    const lag = setInterval(() => block(350), 20);
    let settled: string | undefined;
    const started = performance.now();
    void lock.acquire().then(
      (got) => (settled = `resolved ${got}`),
      (error: Error) => (settled = error.message),
    );
    // Bounded: the acquisition used to go on for good.
    while (settled === undefined && performance.now() - started < 10_000) await pause(5);
    clearInterval(lag);
    const triesWhileFrozen = tries;
    own.server().thaw();
    await lock.pending;
    client.evalsha = evalsha;
    expect({ settled, triesWhileFrozen }).toEqual({
      settled: expect.stringMatching(/Redis did not answer \(no reply within \d+ ms\)/),
      triesWhileFrozen: expect.toSatisfy((count: number) => count >= 1 && count <= 2),
    });
  }, 30_000);
});
