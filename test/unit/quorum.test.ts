// The quorum's decisions and orderings, against scripted members: what a failed round undoes, that a
// member's release follows its take, and how majorities decide. Real servers: test/quorum, test/clients.
import { describe, expect, it, vi } from "vitest";
import { newBackground } from "../../src/background";
import { LockRedisError } from "../../src/errors";
import { resolveLockSettings } from "../../src/options";
import { quorum } from "../../src/quorum";
import type { LockStore, StoreMaker, Take, TakeRequest } from "../../src/store";

// One client per member: a quorum refuses one client twice.
const client = () => ({ eval: async () => 0 });
const never = <T>() => new Promise<T>(() => {});

/** A member that answers each take as `answer` says (a Take, an error, or a promise it controls). */
function member(answer: (request: TakeRequest) => Promise<Take>) {
  const log: string[] = [];
  const store: LockStore = {
    take: (request) => {
      log.push(`take ${request.nonce}`);
      return answer(request);
    },
    undo: async (_token, nonce) => {
      log.push(`undo ${nonce}`);
    },
    release: async () => {
      log.push("release");
      return true;
    },
    extend: async () => ({ held: true, pttl: 1 }),
    renew: async () => ({ held: true, pttl: 1 }),
    status: async () => ({ held: true, pttl: 1 }),
  };
  return { store, log };
}

function build(members: ReturnType<typeof member>[]) {
  const settings = resolveLockSettings({
    id: "q",
    redis: quorum(members.map(client)),
  });
  let next = 0;
  const make = (() => members[next++]?.store) as unknown as StoreMaker;
  const background = newBackground(undefined);
  return { store: quorum(members.map(client)).build(settings, make, background), background };
}

const granted: Take = { kind: "acquired", fencingToken: undefined, permit: 1, hold: "try", kept: false };
const held: Take = { kind: "held", pttl: 500 };
const request = (nonce: string, lease = 3_000): TakeRequest => ({
  token: "t",
  nonce,
  lease,
  fencing: undefined,
});

describe("a round", () => {
  it("succeeds on a majority, without waiting for a silent member", async () => {
    const members = [member(async () => granted), member(async () => granted), member(never)];
    const { store } = build(members);
    expect(await store.take(request("n1"))).toMatchObject({ kind: "acquired" });
  });

  it("that fails undoes, by its request id, every member that granted or may yet grant; refusals are left alone", async () => {
    let late!: (take: Take) => void;
    const all = [
      member(async () => granted),
      member(async () => held),
      member(() => new Promise((resolve) => (late = resolve))),
    ];
    const { store, background } = build(all);
    // No majority either way until the silent member answers: it is waited for a third of the lease. It
    // could have made the majority: an outage, not contention.
    const failure = await store.take(request("n1", 300)).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(LockRedisError);
    expect((failure as LockRedisError).instances?.map(({ instance }) => instance)).toEqual([2]);
    late(granted);
    await background.pending;
    expect(all[0]?.log).toEqual(["take n1", "undo n1"]);
    expect(all[1]?.log).toEqual(["take n1"]);
    expect(all[2]?.log).toEqual(["take n1", "undo n1"]);
  });
});

describe("a round's failure", () => {
  it("is contention when the refusals make a majority, the silent member then immaterial", async () => {
    const { store } = build([member(async () => held), member(async () => held), member(never)]);
    expect(await store.take(request("n1", 300))).toMatchObject({ kind: "held", pttl: 500 });
  });
});

describe("release", () => {
  it("reaches a member only after its take answered, so a grant that lands late is released too", async () => {
    let late!: (take: Take) => void;
    const slow = member(() => new Promise((resolve) => (late = resolve)));
    const members = [member(async () => granted), member(async () => granted), slow];
    const { store, background } = build(members);
    await store.take(request("n1"));
    expect(await store.release("t", 3_000)).toBe(true);
    expect(slow.log).toEqual(["take n1"]);
    late(granted);
    await background.pending;
    expect(slow.log).toEqual(["take n1", "release"]);
  });

  it("decides by majority, and a failure of too many is an error, not a no", async () => {
    const failing = member(async () => granted);
    failing.store.release = async () => {
      throw new Error("down");
    };
    const alsoFailing = member(async () => granted);
    alsoFailing.store.release = failing.store.release;
    const { store } = build([member(async () => granted), failing, alsoFailing]);
    await expect(store.release("t", 3_000)).rejects.toMatchObject({ code: "LOCK_REDIS_ERROR" });
  });
});

describe("a semaphore on a quorum", () => {
  it("tries the permits one by one until a majority grants the same one", async () => {
    const permitOf = (request: TakeRequest) => request.permit ?? 0;
    const members = [0, 1, 2].map(() =>
      member(async (request) => (permitOf(request) === 2 ? { ...granted, permit: 2 } : held)),
    );
    const settings = resolveLockSettings({ id: "s", redis: quorum([client(), client(), client()]) });
    let next = 0;
    const make = Object.assign(() => members[next++]?.store, { permits: 3 }) as unknown as StoreMaker;
    vi.spyOn(Math, "random").mockReturnValue(0);
    const store = quorum([client(), client(), client()]).build(settings, make, newBackground(undefined));
    expect(await store.take(request("n1"))).toMatchObject({ kind: "acquired", permit: 2 });
    vi.restoreAllMocks();
  });
});

// Review helper-104 (2026-12-05): quorum() checked the caller's array, then built on it as it was later.
describe("quorum() builds on the clients it checked", () => {
  it("a change to the caller's array after quorum() does not reach the lock", () => {
    const [a, b, c] = [client(), client(), client()];
    const given = [a, b, c];
    const spec = quorum(given);
    given[2] = a; // one server twice: the check quorum() made would refuse it
    const settings = resolveLockSettings({ id: "q", redis: spec });
    const asked: unknown[] = [];
    const make = ((target: { client: unknown }) => {
      asked.push(target.client);
      return member(async () => granted).store;
    }) as unknown as StoreMaker;
    spec.build(settings, make, newBackground(undefined));
    expect(asked).toEqual([a, b, c]);
    expect(asked[2]).toBe(c);
    // What the spec shows is what it builds on, and cannot be changed (review helper-106).
    expect(Object.isFrozen(spec.clients)).toBe(true);
    expect(spec.clients).toEqual([a, b, c]);
  });
});
