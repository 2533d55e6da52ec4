// The TCP feed's one subscriber connection, against a scripted duplicate of the client: listeners
// counted per channel, a dropped connection never reused. Real clients: test/clients, test/wake.
import { EventEmitter } from "node:events";
import { describe, expect, it } from "vitest";
import type { ChannelListener } from "../../../src/wake/feed";
import { type PubSubClient, tcpSubscriber } from "../../../src/wake/tcp";

class FakeConnection extends EventEmitter {
  readonly sent: string[] = [];
  closed = false;
  duplicate(): PubSubClient {
    throw new Error("only the source duplicates");
  }
  async subscribe(channel: string): Promise<void> {
    this.sent.push(`SUBSCRIBE ${channel}`);
  }
  async unsubscribe(channel: string): Promise<void> {
    this.sent.push(`UNSUBSCRIBE ${channel}`);
  }
  disconnect(): void {
    this.closed = true;
  }
}

function ioredisLike() {
  const connections: FakeConnection[] = [];
  const source = {
    duplicate: () => {
      const connection = new FakeConnection();
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
});
