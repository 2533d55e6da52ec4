// Debounce under faults (review of 2026-12-03). Its count was its call's identity: a late copy of a call's
// request (re-sent by the client, the first still on its way) counted twice, so no caller was last and no
// callback ran; a counter lost mid-burst (a restart without persistence) repeated a count, so an earlier
// caller ran too; and a short `wait` cut a long one's counter lifetime, so it expired under that caller.
import { describe, expect, it } from "vitest";
import { Debounce, LockRedisError } from "../../src/index";
import { scriptRunnerFor } from "../../src/redis/client";
import { countCall } from "../../src/scripts/debounce";
import { uniqueId } from "../support/redis";
import { clientFor, sharedEndpoint, useWire } from "./support/endpoints";

const wire = useWire(sharedEndpoint);
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe("Debounce", () => {
  it("a call whose request arrives twice (re-sent, the first copy late) counts once, and runs", async () => {
    const { passThrough } = wire();
    const retrying = clientFor(
      { url: passThrough.url, token: sharedEndpoint().token },
      { retry: { retries: 2, backoff: () => 20 } },
    );
    let runs = 0;
    const debounce = new Debounce({
      id: uniqueId("debounce-copy"),
      redis: retrying,
      wait: 800,
      callback: () => runs++,
    });
    passThrough.faults.ghostNext(1, 300); // cut at once (the client re-sends), forwarded 300 ms later
    expect(await debounce.call()).toBe(true);
    expect(runs).toBe(1);
  });

  it("with its keys lost mid-burst (a restart without persistence), only the last caller runs", async () => {
    const { direct } = wire();
    const id = uniqueId("debounce-lost");
    const runs: string[] = [];
    const make = () =>
      new Debounce({ id, redis: direct, wait: 800, callback: (who: string) => runs.push(who) });
    const first = make().call("first");
    await pause(200);
    await direct.del(id, `{${id}}:calls`);
    const second = make().call("second");
    expect(await Promise.all([first, second])).toEqual([false, true]);
    expect(runs).toEqual(["second"]);
  });

  it("a shorter wait on the same id never shortens the keys' lifetime", async () => {
    const { direct } = wire();
    const id = uniqueId("debounce-lifetimes");
    const long = new Debounce({ id, redis: direct, wait: 3_000, callback: () => {} });
    const pending = long.call();
    await pause(100);
    expect(await new Debounce({ id, redis: direct, wait: 10, callback: () => {} }).call()).toBe(true);
    // 3 s + 60 s from the long call, less the 0.1 s since: the short one's 60 s would have cut it.
    expect(await direct.pttl(id)).toBeGreaterThan(61_000);
    expect(await direct.pttl(`{${id}}:calls`)).toBeGreaterThan(61_000);
    expect(await pending).toBe(false); // a later call came
  });

  it("a call's count landing after its caller gave up, over 60 s after a newer call's, counts nothing", async () => {
    // Review helper-96: such a count (held on its way, its caller told the call failed) counted as the newest
    // call, so the newer caller, checking after it landed, found itself superseded: nobody ran.
    const { passThrough, direct } = wire();
    const slow = clientFor({ url: passThrough.url, token: sharedEndpoint().token });
    const id = uniqueId("debounce-old-count");
    const runs: string[] = [];
    const make = (redis: typeof direct, wait: number) =>
      new Debounce({ id, redis, wait, callback: (who: string) => void runs.push(who) });
    passThrough.faults.delayNext(1, 63_000);
    const older = make(slow, 1_000)
      .call("older")
      .catch((error: unknown) => error); // gives up at 61 s
    await pause(61_500);
    const newer = make(direct, 3_000).call("newer"); // checks after the older count lands (63 s)
    expect(await newer).toBe(true);
    expect(await older).toBeInstanceOf(LockRedisError);
    expect(runs).toEqual(["newer"]);
  }, 90_000);

  it("the count script refuses a call over 60 s older than the newest counted one, and counts one within", async () => {
    const { direct } = wire();
    const id = uniqueId("debounce-old-script");
    const keys = [id, `{${id}}:calls`];
    const count = (callId: string) => scriptRunnerFor(direct, false)(countCall, keys, [61_000, callId]);
    const micros = Date.now() * 1_000;
    expect(await count(`${micros}-newest`)).toBe(1);
    expect(await count(`${micros - 60_001_000}-old`)).toBe(0);
    expect(await direct.get(id)).toBe(1);
    expect(await count(`${micros - 59_000_000}-recent`)).toBe(2);
    expect(String(await direct.get(keys[1] as string))).toMatch(/^\d+-recent=2 \d+-newest=1$/);
  });

  it("a late copy arriving after 16 other calls counts once, and the burst's last caller runs", async () => {
    // Review helper-32: the calls list kept 16 ids, so this copy counted again, became the newest call, and
    // no caller ran the callback (0.2's bug, which the list exists to fix).
    const { passThrough, direct } = wire();
    const retrying = clientFor(
      { url: passThrough.url, token: sharedEndpoint().token },
      { retry: { retries: 3, backoff: () => 20 } },
    );
    const id = uniqueId("debounce-late-copy");
    const runs: string[] = [];
    const make = (redis: typeof direct) =>
      new Debounce({ id, redis, wait: 3_000, callback: (who: string) => void runs.push(who) });
    passThrough.faults.ghostNext(1, 1_500); // cut at once (the client re-sends), forwarded 1.5 s later
    const first = make(retrying).call("first");
    await pause(200);
    const others = Array.from({ length: 20 }, (_, index) => make(direct).call(`other-${index}`));
    const results = await Promise.all([first, ...others]);
    expect(runs).toHaveLength(1);
    expect(results.filter(Boolean)).toHaveLength(1);
  });
});
