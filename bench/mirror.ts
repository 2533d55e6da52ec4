import { Lock, type LockCreateConfig } from "../dist/index.js";
import type { LockHandle } from "./variants";

/** A client method called as `evalsha(...)`, whatever the client's argument convention. */
type EvalSha = (...args: unknown[]) => Promise<unknown>;

/** Builds a fresh argument from a recorded one: the cycle's token in, per-call ids redrawn by `fresh`. */
type Template = (token: string, fresh: (recorded: string) => string) => unknown;

const ID_ALPHABET = "0123456789abcdefghijklmnopqrstuvwxyz";

/** A client that records the arguments of every `evalsha` call our Lock makes through it. */
export interface Recorder {
  readonly client: object;
  readonly calls: unknown[][];
}

/**
 * A recorder in front of an eval client such as `@upstash/redis` (called `evalsha(sha1, keys, args)`),
 * shaped as a plain eval client: with auto-pipelining, `@upstash/redis` answers every command name
 * through a proxy, so its own methods cannot be wrapped.
 */
export function evalClientRecorder(client: { eval: EvalSha; evalsha: EvalSha }): Recorder {
  const calls: unknown[][] = [];
  return {
    calls,
    client: {
      eval: (...args: unknown[]) => client.eval(...args),
      evalsha: (...args: unknown[]) => {
        calls.push(structuredClone(args));
        return client.evalsha(...args);
      },
    },
  };
}

/** A recorder on a client of its own whose `evalsha` can be wrapped in place (an ioredis duplicate). */
export function wrappedRecorder(client: { evalsha: EvalSha }): Recorder {
  const calls: unknown[][] = [];
  const original = client.evalsha;
  client.evalsha = (...args: unknown[]) => {
    calls.push(structuredClone(args));
    return original.apply(client, args);
  };
  return { client, calls };
}

/**
 * The "raw client" baseline: exactly the EVALSHA calls our Lock makes for acquire + release (same
 * scripts, keys and argument shapes, a fresh token and fresh per-call ids each time), sent straight
 * through `client` with nothing around them. It is learnt by recording what the library sends through
 * `recorder`, not by importing the library's internals, so it stays true when they change.
 */
export async function mirrorOfOurCommands(
  client: object,
  recorder: Recorder,
  key: string,
  lease: number,
): Promise<LockHandle> {
  const cycle = async (token: string) => {
    recorder.calls.length = 0;
    const lock = new Lock({ id: key, redis: recorder.client as LockCreateConfig["redis"], lease });
    if (!(await lock.acquire({ uuid: token }))) throw new Error(`could not take ${key} to record it`);
    await lock.release();
    return [...recorder.calls];
  };
  // Until a cycle goes by SHA-1 alone: the library sends a script in full again when its digest was
  // not ready by the time the first reply came (a fast server), though Redis has cached it.
  for (let warm = 0; warm < 5; warm++) if ((await cycle(crypto.randomUUID())).length === 2) break;
  const first = crypto.randomUUID();
  const second = crypto.randomUUID();
  const one = await cycle(first);
  const two = await cycle(second);
  if (one.length !== 2 || two.length !== 2) {
    throw new Error(`ours sent ${one.length} script calls for acquire + release; the raw mirror expects 2`);
  }
  const [acquireCall, releaseCall] = one.map((call, index) =>
    templateOf(call, two[index], first, second),
  ) as [Template, Template];
  const evalsha = (...args: unknown[]) => (client as { evalsha: EvalSha }).evalsha(...args);
  let token = "";
  let fresh = freshIds();
  const mirror: LockHandle = {
    acquire: async () => {
      token = crypto.randomUUID();
      fresh = freshIds();
      const reply = await evalsha(...(acquireCall(token, fresh) as unknown[]));
      return Array.isArray(reply) && Number(reply[0]) === 1;
    },
    release: () => evalsha(...(releaseCall(token, fresh) as unknown[])),
  };
  // Two cycles in a row succeed only if the mirrored release really frees the key.
  for (let index = 0; index < 2; index++) {
    if (!(await mirror.acquire())) throw new Error(`the raw mirror of our commands could not take ${key}`);
    await mirror.release();
  }
  return mirror;
}

/**
 * Compares two recordings of the same call made with tokens `a` and `b`: what is equal stays, what
 * differs only by the token takes the new token, and any other difference (a per-call id) is redrawn
 * once per cycle (see {@link freshIds}).
 */
function templateOf(one: unknown, two: unknown, a: string, b: string): Template {
  if (Array.isArray(one) && Array.isArray(two) && one.length === two.length) {
    const parts = one.map((item, index) => templateOf(item, two[index], a, b));
    return (token, fresh) => parts.map((part) => part(token, fresh));
  }
  if (one === two) return () => one;
  if (typeof one === "string" && typeof two === "string") {
    if (one.includes(a) && one.split(a).join(b) === two) return (token) => one.split(a).join(token);
    if (one.length === two.length) return (_token, fresh) => fresh(one);
  }
  throw new Error(
    `cannot mirror an argument that changed from ${JSON.stringify(one)} to ${JSON.stringify(two)}`,
  );
}

/**
 * One cycle's per-call ids: each recorded id gets one fresh id, the same wherever it recurs (a release names
 * the try that took the lock). An `<order>-<random>` id keeps its form with an order that keeps increasing.
 */
function freshIds(): (recorded: string) => string {
  const drawn = new Map<string, string>();
  return (recorded) => {
    let id = drawn.get(recorded);
    if (id === undefined) {
      const [, random] = /^\d+-([0-9a-z]+)$/.exec(recorded) ?? [];
      id = random === undefined ? randomId(recorded.length) : `${nextOrder()}-${randomId(random.length)}`;
      drawn.set(recorded, id);
    }
    return id;
  };
}

let lastOrder = 0;

/** A strictly increasing order, in µs of the clock, as the ids the library sends carry. */
function nextOrder(): number {
  lastOrder = Math.max(lastOrder + 1, Date.now() * 1000);
  return lastOrder;
}

function randomId(length: number): string {
  const bytes = crypto.getRandomValues(new Uint8Array(length));
  let id = "";
  for (const byte of bytes) id += ID_ALPHABET[byte % ID_ALPHABET.length];
  return id;
}
