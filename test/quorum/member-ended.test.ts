// A member's subscription that breaks before a majority of members confirmed theirs (src/quorum.ts
// `combined`): it used to count towards the majority anyway, and the wait, told "ended" while its listen was
// pending, subscribed again; both listens then resolved, the first never stopped: member 1's subscription
// outlived every wait (and kept a program from exiting). Now the whole subscription fails (the wait polls):
// member 1's pending listen is let go unconfirmed, and nothing counts a broken member.
import { connect, createServer, type Server, type Socket } from "node:net";
import { Redis as IoRedis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { enableWakeUps, Lock, quorum } from "../../src/index";
import { eventChannel } from "../../src/keys";
import { feedFor } from "../../src/wake/feeds";
import { type RedisServerHandle, startRedisServer } from "../../stack/redis-server";
import { waitUntil, within } from "../faults/support/time";
import { uniqueId } from "../support/redis";

let servers: RedisServerHandle[] = [];
let relay: Server;
let relayPort: number;
const sockets: Socket[] = [];
const clients: IoRedis[] = [];
// Member 1's subscriber connection goes through the relay, which holds every reply from Redis until the test
// lets them through: its SUBSCRIBE reaches Redis, its confirmation waits as long as the test needs.
let gateOpen = false;
const heldReplies: (() => void)[] = [];
let repliesHeld = 0;
const openGate = () => {
  gateOpen = true;
  for (const deliver of heldReplies.splice(0)) deliver();
};

const io = (port: number): IoRedis => {
  const client = new IoRedis(port, "127.0.0.1");
  client.on("error", () => {});
  clients.push(client);
  return client;
};

beforeAll(async () => {
  servers = await Promise.all([0, 1, 2].map(() => startRedisServer()));
  const target = servers[1] as RedisServerHandle;
  relay = createServer((client) => {
    const upstream = connect(target.port, "127.0.0.1");
    sockets.push(client, upstream);
    client.on("data", (data: Buffer) => upstream.write(data));
    upstream.on("data", (data: Buffer) => {
      const deliver = () => {
        if (!client.destroyed) client.write(data);
      };
      if (gateOpen) deliver();
      else {
        repliesHeld += 1;
        heldReplies.push(deliver);
      }
    });
    for (const socket of [client, upstream]) socket.on("error", () => {});
    client.on("close", () => upstream.destroy());
    upstream.on("close", () => client.destroy());
  });
  await new Promise<void>((resolve) => relay.listen(0, "127.0.0.1", resolve));
  relayPort = (relay.address() as { port: number }).port;
}, 60_000);

afterAll(async () => {
  openGate();
  for (const client of clients) client.disconnect();
  for (const socket of sockets) socket.destroy();
  await new Promise((resolve) => relay.close(resolve));
  await Promise.all(servers.map((server) => server.stop()));
});

/** One listen on a member's feed: still pending, refused (no subscription), or listening until stopped. */
interface Listen {
  outcome: "pending" | "refused" | "listening" | "stopped";
}

/** Records each listen on `client`'s feed, and whether it was let go. */
function recordListens(client: IoRedis): Listen[] {
  const feed = feedFor(client) as NonNullable<ReturnType<typeof feedFor>>;
  const listen = feed.listen.bind(feed);
  const listens: Listen[] = [];
  feed.listen = async (name, onEvent, signal) => {
    const record: Listen = { outcome: "pending" };
    listens.push(record);
    const listening = await listen(name, onEvent, signal);
    if (!listening) {
      record.outcome = "refused";
      return undefined;
    }
    record.outcome = "listening";
    return {
      since: listening.since,
      stop: () => {
        record.outcome = "stopped";
        listening.stop();
      },
    };
  };
  return listens;
}

const letGo = (listen: Listen) => listen.outcome === "refused" || listen.outcome === "stopped";

describe("quorum wake-ups: a member's subscription breaks before a majority confirmed", () => {
  it("the pending listen is let go, the wait polls and acquires after the release, no subscription is left", async () => {
    const id = uniqueId("quorum-ended");
    const channel = (await eventChannel(id)) as string;
    const admins = servers.map((server) => io(server.port));
    const numsub = async (member: number) =>
      Number(((await (admins[member] as IoRedis).pubsub("NUMSUB", channel)) as [string, number])[1]);
    const holder = new Lock({ id, redis: quorum(servers.map((server) => io(server.port))), lease: 60_000 });
    expect(await holder.acquire()).toBe(true);

    const [w0, w1, w2] = servers.map((server) => io(server.port)) as [IoRedis, IoRedis, IoRedis];
    // Member 1's subscriber connection (its duplicate) goes through the relay.
    (w1 as unknown as { duplicate: (options?: object) => IoRedis }).duplicate = (options) => {
      const duplicate = new IoRedis(relayPort, "127.0.0.1", { ...options });
      clients.push(duplicate);
      return duplicate;
    };
    // Member 2 without wake-ups: two of three can subscribe, a majority. Its scripts count the wait's tries.
    let tries = 0;
    const scripts = w2 as unknown as Record<"eval" | "evalsha", (...args: unknown[]) => Promise<unknown>>;
    for (const name of ["eval", "evalsha"] as const) {
      const send = scripts[name].bind(w2);
      scripts[name] = (...args) => {
        tries += 1;
        return send(...args);
      };
    }
    enableWakeUps(w0);
    enableWakeUps(w1);
    const member0Listens = recordListens(w0);
    const member1Listens = recordListens(w1);
    // Polls every 100 ms; a covered wait's safety poll comes `maxDelay` after a try (or `retry.delay` before
    // its last try): tens of seconds, past every bounded wait below. Only a polling wait acquires within them.
    const waiter = new Lock({
      id,
      redis: quorum([w0, w1, w2]),
      lease: 60_000,
      retry: { attempts: 1_000, delay: 100, maxDelay: 60_000 },
    });
    const waiting = waiter.acquire();
    waiting.catch(() => {});

    // Member 0 subscribed; member 1's SUBSCRIBE reached Redis, its confirmation held at the relay.
    await waitUntil(() => member0Listens[0]?.outcome === "listening", "member 0 subscribed");
    await waitUntil(async () => repliesHeld >= 1 && (await numsub(1)) === 1, "member 1's SUBSCRIBE at Redis");
    expect(member1Listens.map((listen) => listen.outcome)).toEqual(["pending"]);
    expect(feedFor(w1)?.active(channel)).toBe(false);

    // Member 0's subscriber connection drops (a network blip) before member 1 confirmed.
    await (admins[0] as IoRedis).call("CLIENT", "KILL", "TYPE", "pubsub");
    // The quorum's subscription fails at once: member 1's pending listen is let go before its confirmation
    // (still held). Bounded: a listen that waits for the confirmation is judged once the gate is open.
    await waitUntil(() => member1Listens.every(letGo), "member 1's pending listen let go", {
      timeoutMs: 3_000,
    }).catch(() => undefined);
    const beforeConfirmation = member1Listens.map((listen) => listen.outcome);
    // Lets the confirmation through (to a connection still open): a listen still waiting for it resolves now.
    openGate();
    await waitUntil(
      () => member1Listens.every((listen) => listen.outcome !== "pending"),
      "member 1's listen settled",
    ).catch(() => undefined);
    expect(beforeConfirmation).toEqual(["refused"]);

    // The wait polls, covered by nothing: tries keep reaching member 2 (a covered wait's next one is its safety
    // poll, tens of seconds away).
    const triesBefore = tries;
    await waitUntil(() => tries >= triesBefore + 3, "the wait polls on", { timeoutMs: 10_000 });

    expect(await holder.release()).toBe(true);
    // Acquires at a poll, before any safety poll: a wait covered by a broken member would not hear the
    // release (member 0's subscription is gone, member 1's alone is no majority) and hang past this bound.
    expect(await within(waiting, 10_000, "the waiter")).toBe(true);
    expect(await waiter.release()).toBe(true);

    // Every listen is let go, and every subscription ends (past the 250 ms linger of an active one). One that
    // outlives the wait never ends: the bounded wait then fails.
    await waitUntil(
      async () =>
        [...member0Listens, ...member1Listens].every(letGo) &&
        (await numsub(0)) === 0 &&
        (await numsub(1)) === 0,
      "every listen let go, no subscription left",
      { timeoutMs: 10_000, intervalMs: 50 },
    ).catch(() => undefined);
    expect(member0Listens.length).toBeGreaterThanOrEqual(1);
    expect(member1Listens.length).toBeGreaterThanOrEqual(1);
    expect([...member0Listens, ...member1Listens].filter((listen) => !letGo(listen))).toEqual([]);
    expect(member0Listens[0]?.outcome).toBe("stopped"); // the broken one, let go by the failed subscription
    expect([await numsub(0), await numsub(1)]).toEqual([0, 0]);
  }, 60_000);
});
