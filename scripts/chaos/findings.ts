// `npx tsx scripts/chaos/findings.ts`: what `npm run chaos` found, each in its smallest form
// (scripts/chaos/RESULTS.md), on private servers behind pass-throughs that hold chosen requests.
//
// 1. Over HTTP, a try whose request (not its reply) is late reaches Redis after a later try with
//    the same token: it takes the lock again and names itself in the receipt, so its undo, once its
//    answer comes, deletes the later try's grant, and the library says held while Redis has nothing.
//    - one Redis: acquire({ uuid }) times out while its take is held; acquire({ uuid }) again
//      succeeds; the first take lands, and its undo deletes the key (Lock, FairLock, Semaphore);
//    - a quorum of 3: round 1 of one acquisition is refused by two members while its take to the
//      third is held; round 2 gets two members, one of them the third; round 1's take lands there,
//      and its undo deletes that grant: the token is left on one member of three.
// 2. On a quorum, a try that its acquire() gave up on but that a majority then granted is undone on
//    every member at once, without waiting for each member's take: a take still on its way lands
//    after its undo, and the token stays on that member for a whole lease, held by nobody.
//
// Exit code 0 when Redis agrees with the library everywhere, 1 when it does not.

import { Redis } from "@upstash/redis";
import { FairLock, type Lease, Lock, quorum, Semaphore } from "../../src/index";
import { companionKey } from "../../src/keys";
import { type LocalStack, startLocalStack } from "../../stack/local-stack";
import { type PassThrough, startPassThrough } from "../../test/support/pass-through";

const HELD_MS = 300;
const LEASE_MS = 5_000;
const options = { enableTelemetry: false, retry: false } as const;
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

interface Server {
  readonly stack: LocalStack;
  readonly wire: PassThrough;
  /** Through the pass-through: what the lock uses. */
  readonly redis: Redis;
  /** Straight to the proxy: what the check uses. */
  readonly direct: Redis;
}

async function startServer(): Promise<Server> {
  const stack = await startLocalStack();
  const wire = await startPassThrough({ target: stack.url });
  return {
    stack,
    wire,
    redis: new Redis({ url: wire.url, token: stack.token, ...options }),
    direct: new Redis({ url: stack.url, token: stack.token, ...options }),
  };
}

/** A lock or a semaphore, as this script uses them: acquire with options, and the lease's time left. */
interface Subject {
  acquire(config: { uuid: string; timeout: number }): Promise<boolean>;
  remainingMs(): number;
  release(): Promise<unknown>;
  readonly pending: Promise<void>;
  /** The keys that may hold the token. */
  readonly keys: readonly string[];
}

function lockSubject(lock: Lock): Subject {
  return {
    acquire: (config) => lock.acquire(config),
    remainingMs: () => lock.remainingMs,
    release: () => lock.release(),
    get pending() {
      return lock.pending;
    },
    keys: [lock.id],
  };
}

function semaphoreSubject(semaphore: Semaphore): Subject {
  let lease: Lease | undefined;
  return {
    acquire: async (config) => {
      lease = await semaphore.acquire(config);
      return lease !== undefined;
    },
    remainingMs: () => lease?.remainingMs ?? 0,
    release: async () => lease?.release(),
    get pending() {
      return semaphore.pending;
    },
    keys: [1, 2].map((permit) => companionKey(semaphore.id, `:permit:${permit}`)),
  };
}

/** Finding 1 on one Redis: a timed-out try with a held request, then the same uuid again. */
async function reorderedOnOneRedis(server: Server, name: string, subject: Subject): Promise<boolean> {
  // Warm up: the scripts are loaded, so the next request is the take itself.
  await subject.acquire({ uuid: crypto.randomUUID(), timeout: 2_000 });
  await subject.release();
  const uuid = crypto.randomUUID();
  server.wire.faults.delayNext(1, HELD_MS);
  const first = await subject.acquire({ uuid, timeout: 100 }).catch((error: { code?: string }) => error.code);
  const second = await subject.acquire({ uuid, timeout: 2_000 });
  await pause(HELD_MS + 200);
  await subject.pending;
  const values = await Promise.all(subject.keys.map((key) => server.direct.get<string>(key)));
  const agrees = !second || subject.remainingMs() === 0 || values.includes(uuid);
  console.log(
    `${name} on one Redis: first acquire ${first}, second ${second}; the library gives ` +
      `${subject.remainingMs()} ms more, Redis has the token: ${values.includes(uuid)}` +
      (agrees ? "" : "   <- contradiction"),
  );
  return agrees;
}

/** Finding 1 on a quorum of 3: round 1 refused by two members while its take to the third is held. */
async function reorderedOnQuorum(servers: readonly Server[]): Promise<boolean> {
  const [a, b, c] = servers as [Server, Server, Server];
  const id = `repro:quorum:${crypto.randomUUID()}`;
  const lock = new Lock({ id, redis: quorum(servers.map((server) => server.redis)), lease: LEASE_MS });
  // Warm up: the scripts are loaded on every member.
  await lock.acquire();
  await lock.release();
  await a.direct.set(id, "someone-else-a", { px: 10_000 });
  await c.direct.set(id, "someone-else-c", { px: 10_000 });
  b.wire.faults.delayNext(1, HELD_MS);
  const acquiring = lock.acquire({ timeout: 2_000 });
  // Round 1 is refused by a and c at once; free a before round 2, a retry delay (100 ms) later.
  await pause(50);
  await a.direct.del(id);
  const acquired = await acquiring;
  await pause(HELD_MS + 200);
  await lock.pending;
  const values = await Promise.all(servers.map((server) => server.direct.get<string>(id)));
  const ours = values.filter((value) => value !== null && !value.startsWith("someone-else")).length;
  const agrees = !acquired || lock.remainingMs === 0 || ours >= 2;
  console.log(
    `Lock on a quorum of 3: acquired ${acquired}; the library gives ${lock.remainingMs} ms more, ` +
      `the token is on ${ours} of 3 members` +
      (agrees ? "" : "   <- contradiction: another client can now take a majority"),
  );
  return agrees;
}

/** Finding 2: a try given up on, granted by two members while its take to the third is held longer. */
async function takeAfterUndo(servers: readonly Server[]): Promise<boolean> {
  const id = `repro:quorum-undo:${crypto.randomUUID()}`;
  const lock = new Lock({ id, redis: quorum(servers.map((server) => server.redis)), lease: LEASE_MS });
  await lock.acquire();
  await lock.release();
  const [a, b, c] = servers as [Server, Server, Server];
  // The call gives up after 30 ms; a and b grant at 60 ms, c's take lands at 400 ms.
  a.wire.faults.delayNext(1, 60);
  b.wire.faults.delayNext(1, 60);
  c.wire.faults.delayNext(1, 400);
  const uuid = crypto.randomUUID();
  const result = await lock.acquire({ uuid, timeout: 30 }).catch((error: { code?: string }) => error.code);
  await lock.pending;
  const values = await Promise.all(servers.map((server) => server.direct.get<string>(id)));
  const left = values.filter((value) => value === uuid).length;
  console.log(
    `Lock on a quorum of 3, a try given up on: acquire ${result}; once pending settled, the token ` +
      `is on ${left} of 3 members${left === 0 ? "" : `   <- left behind for up to its lease (${LEASE_MS} ms)`}`,
  );
  return left === 0;
}

const servers = await Promise.all([0, 1, 2].map(startServer));
try {
  const [first] = servers as [Server];
  const id = (kind: string) => `repro:${kind}:${crypto.randomUUID()}`;
  const results = [
    await reorderedOnOneRedis(
      first,
      "Lock",
      lockSubject(new Lock({ id: id("lock"), redis: first.redis, lease: LEASE_MS })),
    ),
    await reorderedOnOneRedis(
      first,
      "FairLock",
      lockSubject(new FairLock({ id: id("fair-lock"), redis: first.redis, lease: LEASE_MS })),
    ),
    await reorderedOnOneRedis(
      first,
      "Semaphore",
      semaphoreSubject(new Semaphore({ id: id("semaphore"), redis: first.redis, lease: LEASE_MS, limit: 2 })),
    ),
    await reorderedOnQuorum(servers),
    await takeAfterUndo(servers),
  ];
  process.exitCode = results.every(Boolean) ? 0 : 1;
} finally {
  for (const server of servers) await server.wire.close();
  await Promise.all(servers.map((server) => server.stack.stop()));
}
