// Randomized interleavings, from review helper-71 (2026-12-04). Seeded schedules of acquires (some of
// whose requests are swallowed: the connection cut, never forwarded), extends, releases, runs of
// extends, leases seeded with a chosen uuid, and late copies of captured requests re-sent to the proxy,
// on a Lock, a FairLock and a Semaphore of 1, each after 8 short holds of other tokens (so a lock's grant
// starts full). After every step it checks, from the holders' point of view, that no two leases believe
// they hold different holds, that a stale lease's extend or release acts on nothing, and that no hold is
// kept for nobody, except for the documented classes in `check` and `excuse`.
// It found that a lock grant dropped a hold's confirming tries (the tries of other leases of its uuid):
// a late copy of one then took the free lock for nobody, or named a newer hold of its uuid, so the
// stale lease extended and released it while its holder held (fixed in cd0c17a, src/scripts/tries.ts).
// The three cases at the end are that defect's minimal shapes.
//
// The seeds are fixed (SEEDS): a run makes the same choices every time (tokens and request ids differ).
// It prints nothing; a violation fails naming the seed and the steps. To reproduce or explore locally:
//   RANDOM_SCHEDULES_SEEDS=7,12 npx vitest run test/faults/random-schedules.test.ts       (these seeds)
//   RANDOM_SCHEDULES_COUNT=200 RANDOM_SCHEDULES_FROM=5000 npx vitest run ...              (seeds 5000-5199)
//   RANDOM_SCHEDULES_STEPS=60 ...                                (steps per schedule, default 40)
import type { IncomingMessage } from "node:http";
import type { Redis } from "@upstash/redis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { seededRandom } from "../../scripts/soak/faults";
import { FairLock, Lock, Semaphore } from "../../src/index";
import { companionKey } from "../../src/keys";
import { readAll } from "../support/pass-through";
import { uniqueId } from "../support/redis";
import { clientFor, sharedEndpoint } from "./support/endpoints";
import { forwardedHeaders, RecordingServer } from "./support/recording";

const LEASE_MS = 60_000;
type Kind = "Lock" | "FairLock" | "Semaphore";

/** Fixed seeds per kind; the Lock's include ones that fail on the code before cd0c17a. */
const SEEDS: Record<Kind, readonly number[]> = {
  // 7-97 fail on the code before cd0c17a (the defect); 75 failed on a list collapsed at 16 (now at 64).
  Lock: [7, 12, 29, 30, 76, 91, 96, 97, 75, 1, 2, 3, 4, 5],
  FairLock: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10],
  Semaphore: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10],
};
const STEPS = Number(process.env.RANDOM_SCHEDULES_STEPS ?? 40);

function seedsOf(kind: Kind): readonly number[] {
  const listed = process.env.RANDOM_SCHEDULES_SEEDS;
  if (listed) return listed.split(",").map(Number);
  const count = Number(process.env.RANDOM_SCHEDULES_COUNT ?? 0);
  const from = Number(process.env.RANDOM_SCHEDULES_FROM ?? 1);
  return count > 0 ? Array.from({ length: count }, (_, i) => from + i) : SEEDS[kind];
}

/** One request that reached the capturing pass-through. */
interface Captured {
  readonly n: number;
  readonly label: string;
  readonly path: string;
  readonly headers: Record<string, string>;
  readonly body: string;
  readonly at: number;
  readonly holderAtSend: string | null;
  readonly epochAtSend: number;
  swallowed: boolean;
  reply?: string;
}

/**
 * A pass-through that records every request (to re-send a late copy of it) and swallows the next
 * `swallow` ones: the client's connection cut, the request never forwarded.
 */
class Capture extends RecordingServer {
  label = "";
  swallow = 0;
  log: Captured[] = [];
  epoch = 0;
  holder: string | null = null;

  start(): Promise<void> {
    return this.listen((req, res) => {
      this.serve(req, res.writeHead.bind(res), res.end.bind(res)).catch(() => req.socket.destroy());
    });
  }

  async serve(
    req: IncomingMessage,
    head: (status: number, headers: Record<string, string>) => unknown,
    end: (text: string) => unknown,
  ): Promise<void> {
    const entry: Captured = {
      n: this.log.length,
      label: this.label,
      path: req.url ?? "/",
      headers: forwardedHeaders(req),
      body: (await readAll(req)).toString(),
      at: performance.now(),
      holderAtSend: this.holder,
      epochAtSend: this.epoch,
      swallowed: false,
    };
    this.log.push(entry);
    if (this.swallow > 0) {
      this.swallow--;
      entry.swallowed = true;
      req.socket.destroy();
      return;
    }
    const reply = await this.forward(entry, req.method);
    const text = await reply.text();
    entry.reply = text;
    head(reply.status, { "content-type": reply.headers.get("content-type") ?? "application/json" });
    end(text);
  }
}

/** A lease as the schedule sees it. */
interface Handle {
  readonly name: string;
  token: string;
  uuid: string | undefined;
  /** Acquired: its calls name its hold. False: seeded (or a Lock of a chosen uuid found lost), by token. */
  named: boolean;
  believes: boolean;
  epoch: number;
  release(): Promise<boolean>;
  extend(ms: number): Promise<boolean>;
}

interface Outcome {
  readonly violation?: string;
  readonly steps: string[];
}

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

let capture: Capture;
beforeAll(async () => {
  capture = new Capture(sharedEndpoint().url);
  await capture.start();
});
afterAll(async () => {
  await capture.close();
});

/** Why a hold kept for nobody after the late copy `late` is documented, or undefined. */
function excuse(
  kind: Kind,
  epoch: number,
  late: Captured,
  confirmations: Record<number, number>,
): string | undefined {
  const tookBefore = late.reply?.includes('"result":[1') ?? false;
  const epochsSince = epoch - 1 - late.epochAtSend;
  // keys.md: "Not caught: a copy later than its waiter's entry (`retry.maxDelay` + 2 s after its send)"
  if (kind === "FairLock" && late.label.includes("twice") && performance.now() - late.at <= 2_020)
    return undefined;
  // guarantees.md: "So can the first copy of a try whose re-sent copy was refused (... a refusal leaves no trace)"
  if (!late.swallowed && !tookBefore) return "its first run was refused";
  // keys.md: "nor one of a try undone while another token held (the undo names it nowhere ...)"
  if (late.swallowed && late.holderAtSend !== null) return "a swallowed try undone while another token held";
  // guarantees.md: "a lock's grant keeps the newest 32 tries of the last holds"; "a fair lock's or
  // semaphore's list keeps about 25 entries, which each hold's release and each undo fill"
  if (epochsSince >= (kind === "Lock" ? 32 : 8)) return `${epochsSince} holds since its send`;
  // keys.md: "A list of 64 keeps its first try (which took the hold), the newest 40 other unabandoned
  // ones [...], and the newest abandoned ones up to 64 entries": a swallowed try's undone entry, buried
  // with up to 31 newer ones, is dropped once 31 tries of a later hold (live or undone) came after them.
  let most = 0;
  for (let e = late.epochAtSend + 1; e < epoch; e++) most = Math.max(most, confirmations[e] ?? 0);
  if (late.swallowed && most >= 32) return `a hold since its send confirmed by ${most} leases`;
  return undefined;
}

async function warmUpLock(kind: Kind, id: string, redis: Redis): Promise<Lock | undefined> {
  const lock =
    kind === "FairLock"
      ? new FairLock({ id, redis, lease: LEASE_MS, autoExtend: false })
      : new Lock({ id, redis, lease: LEASE_MS, autoExtend: false });
  return (await lock.acquire({ retry: { attempts: 1 } })) ? lock : undefined;
}

async function runSchedule(kind: Kind, seed: number, stepsWanted: number): Promise<Outcome> {
  const random = seededRandom(seed);
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)] as T;
  const { token: auth } = sharedEndpoint();
  const redis = clientFor({ url: capture.url, token: auth });
  const direct = clientFor(sharedEndpoint());
  const id = uniqueId(`random-${kind}`);
  const key = kind === "Semaphore" ? companionKey(id, ":permit:1") : id;
  const shared = [crypto.randomUUID(), crypto.randomUUID()];
  const actorCount = 2 + Math.floor(random() * 3);
  const actors = Array.from({ length: actorCount }, (_, i) =>
    random() < 0.7 ? shared[i % (random() < 0.7 ? 1 : 2)] : undefined,
  );
  const handles: Handle[] = [];
  const steps: string[] = [];
  let epoch = 0;
  let holder: string | null = null;
  const epochCause: Record<number, Captured | undefined> = {};
  const confirmations: Record<number, number> = {};
  capture.log = [];
  capture.epoch = 0;
  capture.holder = null;
  capture.label = "warm-up";
  // 8 short holds of other tokens first: a lock's grant then lists as many tries of earlier holds as it
  // keeps (8), the bound where the defect was; for the others they fill the lists of tries that must take nothing.
  for (let i = 0; i < 8; i++) {
    const lease =
      kind === "Semaphore"
        ? await new Semaphore({ id, redis, limit: 1, lease: LEASE_MS }).acquire({ retry: { attempts: 1 } })
        : await warmUpLock(kind, id, redis);
    if (!lease || !(await lease.release())) throw new Error(`warm-up hold ${i} of ${id} failed`);
  }

  const handle = (
    name: string,
    uuid: string | undefined,
    named: boolean,
    lease: { release(): Promise<boolean>; extend(ms: number): Promise<boolean> },
  ): Handle => ({
    name,
    token: uuid ?? "",
    uuid,
    named,
    believes: named,
    epoch: 0,
    release: () => lease.release(),
    extend: (ms) => lease.extend(ms),
  });

  const acquire = async (
    uuid: string | undefined,
    name: string,
    attempts: number,
  ): Promise<Handle | undefined> => {
    const retry = { attempts, delay: 5, maxDelay: 20 };
    const options = uuid === undefined ? { retry } : { uuid, retry };
    if (kind === "Semaphore") {
      const lease = await new Semaphore({ id, redis, limit: 1, lease: LEASE_MS }).acquire(options);
      return lease ? handle(name, uuid, true, lease) : undefined;
    }
    const lock =
      kind === "FairLock"
        ? new FairLock({ id, redis, lease: LEASE_MS, autoExtend: false })
        : new Lock({ id, redis, lease: LEASE_MS, autoExtend: false });
    return (await lock.acquire(options)) ? handle(name, uuid, true, lock) : undefined;
  };

  const seeded = (uuid: string, name: string): Handle => {
    if (kind === "Semaphore")
      return handle(name, uuid, false, new Semaphore({ id, redis, limit: 1, lease: LEASE_MS }).permit(uuid));
    const options = { id, redis, lease: LEASE_MS, autoExtend: false, uuid };
    return handle(name, uuid, false, kind === "FairLock" ? new FairLock(options) : new Lock(options));
  };

  const valid = (h: Handle) => h.believes && holder === h.token && (!h.named || h.epoch === epoch);

  const observe = async (late?: Captured) => {
    const now = await direct.get<string>(key);
    if (now !== null && now !== holder) {
      epoch++;
      epochCause[epoch] = late;
    }
    holder = now;
    capture.epoch = epoch;
    capture.holder = holder;
  };

  /** A violation, "excused ..." (documented; the beliefs, or the hold, repaired), or undefined. */
  const check = (late?: Captured): string | undefined => {
    for (const h of handles) {
      if (!h.believes || valid(h)) continue;
      if (late?.label.includes("bytoken")) {
        const since = capture.log.filter(
          (c) => c.n > late.n && /extend|release|many|seeded/.test(c.label),
        ).length;
        // guarantees.md: "Past that, a re-sent release runs as a new one" (32), and "Only a token seeded
        // elsewhere ..., which knows no such names, acts on any hold of its token, as in 0.2."
        if (since >= 32) {
          for (const o of handles) if (o.believes && !valid(o)) o.believes = false;
          return "excused belief";
        }
      }
      const others = handles.filter((o) => o !== h && valid(o)).map((o) => o.name);
      return `${h.name} (token ${h.token.slice(0, 8)}, epoch ${h.epoch}) believes it holds, but the key holds ${holder?.slice(0, 8) ?? "nothing"} (epoch ${epoch}); valid holders: [${others}]${others.length ? ": TWO HOLDERS" : ""}`;
    }
    if (holder === null || handles.some(valid)) return undefined;
    const cause = epochCause[epoch];
    if (cause) {
      if (excuse(kind, epoch, cause, confirmations)) return "excused hold";
      return `hold for nobody after a late copy of #${cause.n} ${cause.label} (swallowed=${cause.swallowed}, reply=${cause.reply}, holds since=${epoch - 1 - cause.epochAtSend}, holder at send=${cause.holderAtSend?.slice(0, 8)})`;
    }
    // guarantees.md: "A hold keeps the names of up to 42 live tries [...] the calls of the leases it
    // dropped (over 42 at once) act on nothing [...] the hold ends with a kept lease's release, or its lease"
    if ((confirmations[epoch] ?? 0) > 42) return "excused hold";
    return `hold (${holder.slice(0, 8)}, epoch ${epoch}) kept for nobody`;
  };

  const choose = (): string => {
    const live = handles.filter((h) => h.believes);
    const someHandle = () => handles.indexOf(random() < 0.8 && live.length ? pick(live) : pick(handles));
    const r = random();
    const scripts = capture.log.filter((c) => /acquire|release|extend|seeded/.test(c.label));
    if (r < 0.3)
      return `acquire ${Math.floor(random() * actorCount)}${random() < 0.15 ? " swallow" : random() < 0.3 ? " twice" : ""}`;
    if (r < 0.45 && handles.length) return `extend ${someHandle()}${random() < 0.15 ? " swallow" : ""}`;
    if (r < 0.6 && handles.length) return `release ${someHandle()}`;
    if (r < 0.67 && handles.length)
      return `many ${handles.indexOf(pick(handles))} ${8 + Math.floor(random() * 30)}`;
    if (r < 0.72) return `seeded ${pick(shared)}`;
    if (scripts.length) {
      const main = scripts.filter((c) => !c.label.includes("many"));
      return `replay ${pick(random() < 0.7 && main.length ? main : scripts).n}`;
    }
    return "acquire 0";
  };

  const note = (text: string) => {
    steps[steps.length - 1] += text;
  };

  for (let s = 0; s < stepsWanted; s++) {
    const op = choose();
    steps.push(`${s}: ${op}`);
    const [verb, a, b] = op.split(" ");
    capture.label = `${s}:${op}`;
    let late: Captured | undefined;
    try {
      if (verb === "acquire") {
        const actor = Number(a);
        if (b === "swallow") capture.swallow = 2; // the client re-sends a cut request once
        let h: Handle | undefined;
        try {
          h = await acquire(actors[actor], `A${actor}.${s}`, b === "twice" ? 2 : 1);
        } catch {
          note(" -> threw");
        } finally {
          capture.swallow = 0;
        }
        await pause(20); // the undo of a given-up try
        if (h) {
          await observe();
          h.epoch = epoch;
          h.token = holder ?? "";
          confirmations[epoch] = (confirmations[epoch] ?? 0) + 1;
          handles.push(h);
          note(` -> H${handles.length - 1}`);
        } else note(" -> no");
        if (b === "swallow" && holder !== null) confirmations[epoch] = (confirmations[epoch] ?? 0) + 1;
      } else if (verb === "extend" || verb === "release" || verb === "many") {
        const h = handles[Number(a)] as Handle;
        const wasValid = valid(h);
        capture.label = `${s}:${op} ${h.named ? "named" : "bytoken"}`;
        const times = verb === "many" ? Number(b) : 1;
        for (let i = 0; i < times; i++) {
          let result: boolean;
          if (verb === "release") result = await h.release();
          else {
            if (b === "swallow") capture.swallow = 2;
            try {
              result = await h.extend(verb === "many" ? 1 : 1000);
            } catch {
              note(" -> threw");
              continue;
            } finally {
              capture.swallow = 0; // a lost lease may send nothing: no later request may be swallowed
            }
          }
          note(` -> ${result}`);
          if (result && !wasValid && h.named) {
            await observe();
            return {
              violation: `stale lease H${a} (${h.name}): ${verb} returned true, acting on a hold not its own`,
              steps,
            };
          }
          if (!result && wasValid && h.named) {
            await observe();
            return { violation: `H${a} (${h.name}) held its hold, but ${verb} returned false`, steps };
          }
          if (verb === "release") {
            if (result) {
              for (const o of handles)
                if (o.token === h.token && (!h.named || !o.named || o.epoch === h.epoch || !wasValid))
                  o.believes = false;
            }
            h.believes = false;
          } else if (result) {
            if (!h.named) h.believes = true;
          } else {
            h.believes = false; // a lease acquired here still names its hold, lost or not (src/lock.ts #current)
          }
          if (verb !== "many") break;
        }
      } else if (verb === "seeded") {
        const h = seeded(a as string, `S.${s}`);
        h.believes = await h.extend(1000);
        handles.push(h);
        note(` -> H${handles.length - 1} ${h.believes}`);
      } else if (verb === "replay") {
        late = capture.log[Number(a)] as Captured;
        const reply = await capture.replay(late);
        note(` (${late.label}${late.swallowed ? " swallowed" : ""}) -> ${reply.slice(0, 40)}`);
      }
    } catch (error) {
      note(` -> error ${String(error).slice(0, 80)}`);
    }
    await observe(late);
    const problem = check(late);
    if (problem === "excused hold") {
      await direct.del(key); // as if its lease ran out
      await observe();
    } else if (problem && problem !== "excused belief") {
      await direct.del(key);
      return { violation: problem, steps };
    }
  }
  await direct.del(key); // leave nothing held
  return { steps };
}

describe("random schedules of acquires, extends, releases and late copies", () => {
  it.each(["Lock", "FairLock", "Semaphore"] as const)(
    "%s: no two holders, no stale lease acting, no hold kept for nobody",
    async (kind) => {
      const found: string[] = [];
      for (const seed of seedsOf(kind)) {
        const outcome = await runSchedule(kind, seed, STEPS);
        if (outcome.violation)
          found.push(
            `seed ${seed} (${kind}): ${outcome.violation}\n  steps:\n    ${outcome.steps.join("\n    ")}`,
          );
      }
      expect(found.join("\n\n")).toBe("");
    },
    300_000,
  );
});

// The defect's two shapes, as found: a Lock hold confirmed by a second lease of its uuid (b), then a late
// copy of b's try, re-sent by its client. 8 short holds of other tokens first fill the grant's list.
describe("a late copy of a confirming try", () => {
  async function setup(label: string) {
    const { token } = sharedEndpoint();
    const redis = clientFor({ url: capture.url, token });
    const direct = clientFor(sharedEndpoint());
    const id = uniqueId(label);
    const make = () => new Lock({ id, redis, lease: LEASE_MS, autoExtend: false });
    for (let i = 0; i < 8; i++) {
      const other = make();
      expect(await other.acquire({ retry: { attempts: 1 } })).toBe(true);
      expect(await other.release()).toBe(true);
    }
    const uuid = crypto.randomUUID();
    const a = make();
    expect(await a.acquire({ uuid, retry: { attempts: 1 } })).toBe(true);
    const b = make();
    capture.log = [];
    expect(await b.acquire({ uuid, retry: { attempts: 1 } })).toBe(true); // confirms a's hold
    const bTry = capture.log[0] as Captured;
    return { id, make, direct, uuid, a, b, bTry };
  }

  async function newerHold(label: string) {
    const { id, make, direct, uuid, a, b, bTry } = await setup(label);
    expect(await a.release()).toBe(true); // the hold a and b shared ends
    const n = make();
    expect(await n.acquire({ uuid, retry: { attempts: 1 } })).toBe(true); // a newer hold of the uuid
    await capture.replay(bTry);
    return { id, direct, b, n, make };
  }

  it("does not name a newer hold of its uuid: the stale lease's extend acts on nothing", async () => {
    const { id, direct, b, n, make } = await newerHold("random-late-confirm-extend");
    expect(await b.extend(1_000)).toBe(false);
    expect(await n.extend(1_000)).toBe(true);
    expect(await make().acquire({ retry: { attempts: 1 } })).toBe(false);
    await direct.del(id);
  });

  // Only extend OR release: each is the stale lease's own; lost, it still names its hold (src/lock.ts
  // #current), so neither acts on n's hold of the same uuid.
  it("does not name a newer hold of its uuid: the stale lease's release acts on nothing", async () => {
    const { id, direct, b, n } = await newerHold("random-late-confirm-release");
    expect(await b.release()).toBe(false);
    expect(await n.extend(1_000)).toBe(true);
    await direct.del(id);
  });

  it("one hold later, does not take the free lock for nobody", async () => {
    const { id, make, direct, b, bTry } = await setup("random-late-confirm-nobody");
    expect(await b.release()).toBe(true);
    const n = make();
    expect(await n.acquire({ retry: { attempts: 1 } })).toBe(true); // one other hold
    expect(await n.release()).toBe(true);
    await capture.replay(bTry);
    const holder = await direct.get(id);
    await direct.del(id);
    expect(holder).toBeNull();
  });
});
