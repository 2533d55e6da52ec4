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
function ioredisLike(state?: { status: string; connect?: () => Promise<void> }) {
  const connections: FakeConnection[] = [];
  const source = {
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
  it("unsubscribes a channel only when its last listener leaves", async () => {
    const { connections, subscribe } = ioredisLike();
    const signal = new AbortController().signal;
    const stopA = await subscribe("c", listener(), signal);
    const stopB = await subscribe("c", listener(), signal);
    stopA();
    expect(connections[0]?.sent).toEqual(["SUBSCRIBE c"]);
    stopB();
    expect(connections[0]?.sent).toEqual(["SUBSCRIBE c", "UNSUBSCRIBE c"]);
    expect(connections[0]?.closed).toBe(true);
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
    const settle = () => new Promise((resolve) => setTimeout(resolve, 0));
    async function withBusyConnection() {
      const made = ioredisLike();
      const stopOther = await made.subscribe("other", listener(), new AbortController().signal);
      const connection = made.connections[0] as FakeConnection;
      connection.hold = true;
      return { ...made, connection, stopOther };
    }

    it("unsubscribes the channel once Redis confirms it, not leaving it subscribed", async () => {
      const { subscribe, connection, stopOther } = await withBusyConnection();
      const unwanted = new AbortController();
      const joining = subscribe("c", listener(), unwanted.signal);
      await settle();
      unwanted.abort();
      connection.answer();
      await expect(joining).rejects.toThrow();
      expect(connection.sent).toEqual(["SUBSCRIBE other", "SUBSCRIBE c", "UNSUBSCRIBE c"]);
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
      expect(connection.sent).toEqual(["SUBSCRIBE other", "SUBSCRIBE c", "UNSUBSCRIBE c"]);
      stopOther();
    });

    it("a wait joining after the UNSUBSCRIBE subscribes again, after it on the connection", async () => {
      const { subscribe, connection, stopOther } = await withBusyConnection();
      const unwanted = new AbortController();
      const leaving = subscribe("c", listener(), unwanted.signal);
      await settle();
      unwanted.abort();
      connection.answer();
      await expect(leaving).rejects.toThrow();
      connection.hold = false;
      const log: string[] = [];
      const stop = await subscribe("c", listener(log), new AbortController().signal);
      expect(connection.sent).toEqual(["SUBSCRIBE other", "SUBSCRIBE c", "UNSUBSCRIBE c", "SUBSCRIBE c"]);
      connection.emit("message", "c", "released");
      expect(log).toEqual(["released"]);
      stop();
      stopOther();
    });
  });
});
