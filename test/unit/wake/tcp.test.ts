// The TCP feed's one subscriber connection, against a scripted duplicate of the client: listeners
// counted per channel, a dropped connection never reused. Real clients: test/clients, test/wake.
import { EventEmitter } from "node:events";
import { describe, expect, it } from "vitest";
import type { ChannelListener } from "../../../src/wake/feed";
import { type PubSubClient, tcpSubscriber } from "../../../src/wake/tcp";

class FakeConnection extends EventEmitter {
  readonly sent: string[] = [];
  closed = false;
  /** While set, SUBSCRIBE replies wait until the test calls `answer()`, as a slow server's would. */
  hold = false;
  readonly #held: (() => void)[] = [];
  duplicate(): PubSubClient {
    throw new Error("only the source duplicates");
  }
  async subscribe(channel: string): Promise<void> {
    this.sent.push(`SUBSCRIBE ${channel}`);
    if (this.hold) await new Promise<void>((resolve) => this.#held.push(resolve));
  }
  answer(): void {
    for (const reply of this.#held.splice(0)) reply();
  }
  async unsubscribe(channel: string): Promise<void> {
    this.sent.push(`UNSUBSCRIBE ${channel}`);
  }
  disconnect(): void {
    this.closed = true;
  }
}

/** A source whose duplicates are fake connections; `state` gives them a status (and `connect`), else none. */
function ioredisLike(state?: { status: string; connect?: () => Promise<void> }, options?: object) {
  const connections: FakeConnection[] = [];
  const source = {
    options,
    duplicate: () => {
      const connection = new FakeConnection();
      if (state) Object.assign(connection, state);
      connections.push(connection);
      return connection as unknown as PubSubClient;
    },
  } as unknown as PubSubClient;
  return { connections, subscribe: tcpSubscriber(source, true) };
}

const listener = (log: string[] = []): ChannelListener => ({
  message: (message) => log.push(message),
  ended: () => log.push("ended"),
});

describe("tcpSubscriber", () => {
  it("keeps a channel its listeners left subscribed while the connection is open: joined again for free", async () => {
    const { connections, subscribe } = ioredisLike();
    const signal = new AbortController().signal;
    const stopA = await subscribe("c", listener(), signal);
    const stopB = await subscribe("c", listener(), signal);
    const stopOther = await subscribe("d", listener(), signal);
    stopA();
    stopB();
    expect(subscribe.cost?.("c")).toBe(0);
    const log: string[] = [];
    const stopC = await subscribe("c", listener(log), signal);
    connections[0]?.emit("message", "c", "released");
    expect(log).toEqual(["released"]);
    stopC();
    // The last wait's end closes the connection, which ends every subscription: no UNSUBSCRIBE is billed.
    stopOther();
    expect(connections[0]?.sent).toEqual(["SUBSCRIBE c", "SUBSCRIBE d"]);
    expect(connections[0]?.closed).toBe(true);
  });

  it("duplicates in RESP2 with no ready check and no CLIENT SETINFO: no billed command before SUBSCRIBE", async () => {
    const asked: unknown[] = [];
    const source = {
      duplicate: (options: unknown) => {
        asked.push(options);
        return new FakeConnection();
      },
    };
    const stopIoredis = await tcpSubscriber(source as never, true)(
      "c",
      listener(),
      new AbortController().signal,
    );
    const stopNodeRedis = await tcpSubscriber(source as never, false)(
      "c",
      listener(),
      new AbortController().signal,
    );
    expect(asked).toEqual([
      expect.objectContaining({ protocol: 2, enableReadyCheck: false, disableClientInfo: true }),
      // No PING timer either (node-redis's `pingInterval`: review helper-103, 22 commands for 8 attempts).
      expect.objectContaining({
        RESP: 2,
        maintNotifications: "disabled",
        disableClientInfo: true,
        pingInterval: 0,
      }),
    ]);
    stopIoredis();
    stopNodeRedis();
  });

  it("costs a cluster's subscription as its primary's connection: that is the one duplicated", () => {
    const primary = { options: { password: "secret" }, duplicate: () => new FakeConnection() };
    const cluster = {
      isCluster: true,
      options: {},
      nodes: () => [primary],
      duplicate: () => new FakeConnection(),
    };
    expect(tcpSubscriber(cluster as never, true).cost?.("c")).toBe(2); // AUTH, SUBSCRIBE
    const nodeCluster = { masters: [{ client: primary }], duplicate: () => new FakeConnection() };
    expect(tcpSubscriber(nodeCluster as never, false).cost?.("c")).toBe(2);
  });

  // Review helper-105 (2026-12-05): after the first listed primary died, ioredis kept it listed (its
  // connection never used, so never "end"): every later subscriber duplicated the dead node, and waits polled.
  it("duplicates a cluster's first ready primary, not a dead one listed first", () => {
    const duplicated: string[] = [];
    const node = (name: string, state: object) => ({
      ...state,
      options: {},
      duplicate: () => {
        duplicated.push(name);
        return new FakeConnection();
      },
    });
    const cluster = {
      isCluster: true,
      options: {},
      nodes: () => [node("dead", { status: "wait" }), node("live", { status: "ready" })],
      duplicate: () => new FakeConnection(),
    };
    void tcpSubscriber(cluster as never, true)("c", listener(), new AbortController().signal).catch(() => {});
    const nodeCluster = {
      masters: [{ client: node("dead", { isReady: false }) }, { client: node("live", { isReady: true }) }],
      duplicate: () => new FakeConnection(),
    };
    void tcpSubscriber(nodeCluster as never, false)("c", listener(), new AbortController().signal).catch(
      () => {},
    );
    expect(duplicated).toEqual(["live", "live"]);
  });

  it("costs: a SUBSCRIBE, after a new connection's handshake (as the client's options ask)", async () => {
    expect(ioredisLike().subscribe.cost?.("c")).toBe(1);
    const { subscribe } = ioredisLike(undefined, { password: "secret", db: 2, connectionName: "app" });
    expect(subscribe.cost?.("c")).toBe(4); // AUTH, SELECT, CLIENT SETNAME, then SUBSCRIBE
    const stop = await subscribe("c", listener(), new AbortController().signal);
    expect(subscribe.cost?.("c")).toBe(0);
    expect(subscribe.cost?.("d")).toBe(1);
    expect(subscribe.cost?.(undefined)).toBe(1);
    stop();
    expect(ioredisLike(undefined, { database: 0, name: "" }).subscribe.cost?.("c")).toBe(1);
  });

  it("a connection that dropped ends its listeners and is never used again, not even to unsubscribe", async () => {
    const { connections, subscribe } = ioredisLike();
    const signal = new AbortController().signal;
    const log: string[] = [];
    const stopOld = await subscribe("c", listener(log), signal);
    connections[0]?.emit("close");
    expect(log).toEqual(["ended"]);
    const newLog: string[] = [];
    const stopNew = await subscribe("c", listener(newLog), signal);
    expect(connections).toHaveLength(2);
    stopOld();
    expect(connections[0]?.sent).toEqual(["SUBSCRIBE c"]);
    expect(connections[1]?.sent).toEqual(["SUBSCRIBE c"]);
    connections[1]?.emit("message", "c", "released");
    expect(newLog).toEqual(["released"]);
    stopNew();
  });

  // Found by a review: a duplicate inherits `enableOfflineQueue: false` and `lazyConnect`, with which
  // ioredis refuses a command sent before it is ready, and does not connect by itself.
  describe("an ioredis duplicate not ready yet: SUBSCRIBE waits until it is", () => {
    const settle = () => new Promise((resolve) => setTimeout(resolve, 0));

    it('a lazy one (status "wait") is asked to connect first', async () => {
      let connected!: () => void;
      const connect = () => new Promise<void>((resolve) => (connected = resolve));
      const { connections, subscribe } = ioredisLike({ status: "wait", connect });
      const subscribing = subscribe("c", listener(), new AbortController().signal);
      await settle();
      const connection = connections[0] as FakeConnection;
      expect(connection.sent).toEqual([]);
      connected();
      const stop = await subscribing;
      expect(connection.sent).toEqual(["SUBSCRIBE c"]);
      stop();
    });

    it('one connecting (status "connecting") is waited for until "ready"', async () => {
      const { connections, subscribe } = ioredisLike({ status: "connecting" });
      const subscribing = subscribe("c", listener(), new AbortController().signal);
      await settle();
      const connection = connections[0] as FakeConnection;
      expect(connection.sent).toEqual([]);
      connection.emit("ready");
      const stop = await subscribing;
      expect(connection.sent).toEqual(["SUBSCRIBE c"]);
      stop();
    });
  });

  describe("a wait that leaves while its SUBSCRIBE is in flight, another channel keeping the connection", () => {
    // Left idle: subscribed until the connection closes, or 32 other idle channels push it out.
    const settle = () => new Promise((resolve) => setTimeout(resolve, 0));
    async function withBusyConnection() {
      const made = ioredisLike();
      const stopOther = await made.subscribe("other", listener(), new AbortController().signal);
      const connection = made.connections[0] as FakeConnection;
      connection.hold = true;
      return { ...made, connection, stopOther };
    }

    it("keeps the channel subscribed, idle, once Redis confirms it", async () => {
      const { subscribe, connection, stopOther } = await withBusyConnection();
      const unwanted = new AbortController();
      const joining = subscribe("c", listener(), unwanted.signal);
      await settle();
      unwanted.abort();
      connection.answer();
      await expect(joining).rejects.toThrow();
      expect(subscribe.cost?.("c")).toBe(0);
      expect(connection.sent).toEqual(["SUBSCRIBE other", "SUBSCRIBE c"]);
      expect(connection.closed).toBe(false);
      stopOther();
    });

    it("keeps it for a wait that joined the same channel meanwhile, which hears its messages", async () => {
      const { subscribe, connection, stopOther } = await withBusyConnection();
      const unwanted = new AbortController();
      const leaving = subscribe("c", listener(), unwanted.signal);
      await settle();
      unwanted.abort();
      const log: string[] = [];
      const joining = subscribe("c", listener(log), new AbortController().signal);
      await settle();
      connection.answer();
      await expect(leaving).rejects.toThrow();
      const stop = await joining;
      expect(connection.sent).toEqual(["SUBSCRIBE other", "SUBSCRIBE c"]);
      connection.emit("message", "c", "released");
      expect(log).toEqual(["released"]);
      stop();
      expect(connection.sent).toEqual(["SUBSCRIBE other", "SUBSCRIBE c"]);
      stopOther();
    });
  });

  it("past 32 idle channels, a new one unsubscribes the oldest idle first; joining that one subscribes again", async () => {
    const { connections, subscribe } = ioredisLike();
    const signal = new AbortController().signal;
    const stopKeeper = await subscribe("keeper", listener(), signal);
    for (let index = 0; index < 32; index++) (await subscribe(`idle-${index}`, listener(), signal))();
    expect(subscribe.cost?.("new")).toBe(2);
    const stopNew = await subscribe("new", listener(), signal);
    const sent = connections[0]?.sent ?? [];
    expect(sent.slice(-2)).toEqual(["UNSUBSCRIBE idle-0", "SUBSCRIBE new"]);
    const log: string[] = [];
    const stopAgain = await subscribe("idle-0", listener(log), signal);
    expect(sent.slice(-2)).toEqual(["SUBSCRIBE new", "SUBSCRIBE idle-0"]); // 31 idle now: none pushed out
    connections[0]?.emit("message", "idle-0", "released");
    expect(log).toEqual(["released"]);
    for (const stop of [stopAgain, stopNew, stopKeeper]) stop();
    expect(connections[0]?.closed).toBe(true);
  });
});
