// Review helper-168 (6/6): a quorum Lock try that failed as an outage was undone twice on every member: by
// its round, then by the acquisition (which undoes a failed try on one server, where it may have run). Each
// undo is sent up to 4 times: a member that timed out got 8, where api.md says "up to 4 times in all", and a
// member that answered "held" (it took nothing) got one too.
import { describe, expect, it } from "vitest";
import { Lock, LockRedisError, quorum } from "../../src/index";
import { uniqueId } from "../support/redis";
import { useMembers } from "./support/members";

const members = useMembers(3);
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Scripts run (EVAL, EVALSHA) on each of the three members so far. */
async function scriptsRun(): Promise<number[]> {
  return Promise.all(
    members.connect(3).map(async (client) => {
      const info = await client.info("commandstats");
      let calls = 0;
      for (const match of info.matchAll(/cmdstat_(?:eval|evalsha):calls=(\d+)/g)) calls += Number(match[1]);
      return calls;
    }),
  );
}

describe.each([
  ["no client timeout", {}],
  ["a client timeout of 200 ms", { commandTimeout: 200 }],
])("a quorum Lock try that fails as an outage (%s)", (_name, options) => {
  it("is undone once per member that may have taken it (an undo is sent up to 4 times)", async () => {
    const id = uniqueId("undo-once");
    const lock = new Lock({
      id,
      redis: quorum(members.connect(3, options)),
      lease: 3_000,
      retry: { attempts: 1 },
    });
    expect(await lock.acquire()).toBe(true); // loads the scripts on every member
    expect(await lock.release()).toBe(true);
    await lock.pending;
    const [first] = members.connect(1);
    await first?.set(id, "another holder", "PX", 60_000); // member 0 answers "held"
    const before = await scriptsRun();
    members.servers()[1]?.freeze(); // member 1 silent, member 2 grants: no majority either way
    try {
      await expect(lock.acquire()).rejects.toBeInstanceOf(LockRedisError);
      await pause(1_500); // the frozen member's client gives up on its requests meanwhile (with a timeout)
    } finally {
      members.servers()[1]?.thaw();
    }
    await lock.pending;
    await first?.del(id);
    const undos = (await scriptsRun()).map((calls, index) => calls - (before[index] ?? 0) - 1); // one take each
    expect(undos[0]).toBe(0);
    expect(undos[1]).toBeLessThanOrEqual(4);
    expect(undos[2]).toBe(1);
  }, 30_000);
});
