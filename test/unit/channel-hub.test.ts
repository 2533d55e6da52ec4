// How waiters share subscriptions: one per channel, told "active" only when it is, let go of when
// the last waiter leaves (also while still being set up), forgotten when it fails or breaks.
import { describe, expect, it } from "vitest";
import { channelHub, LINGER_MS } from "../../src/wake/channel-hub";
import type { ChannelListener, FeedEvent } from "../../src/wake/feed-types";
import { type PubSubConnection, sharedConnection } from "../../src/wake/shared-connection";

/** A subscription setup the test settles by hand. */
interface PendingSetup {
  readonly channel: string;
  readonly listener: ChannelListener;
  readonly signal: AbortSignal;
  activate(): void;
  fail(): void;
  stopped: boolean;
}

function controlledSubscribe() {
  const setups: PendingSetup[] = [];
  const subscribe = (channel: string, listener: ChannelListener, signal: AbortSignal) =>
    new Promise<() => void>((resolve, reject) => {
      const setup: PendingSetup = {
        channel,
        listener,
        signal,
        stopped: false,
        activate: () =>
          resolve(() => {
            setup.stopped = true;
          }),
        fail: () => reject(new Error("could not subscribe")),
      };
      setups.push(setup);
    });
  return { setups, subscribe };
}

const tick = () => new Promise((resolve) => setTimeout(resolve, 0));

describe("channelHub", () => {
  it("shares one pending subscription per channel, and tells each waiter 'active' only once it is", async () => {
    const { setups, subscribe } = controlledSubscribe();
    const hub = channelHub(subscribe);
    const first = hub.listen("c", () => {}, new AbortController().signal);
    const second = hub.listen("c", () => {}, new AbortController().signal);
    let secondSettled = false;
    void second.then(() => {
      secondSettled = true;
    });
    await tick();
    expect(setups).toHaveLength(1);
    expect(secondSettled).toBe(false);
    setups[0]?.activate();
    expect(typeof (await first)?.stop).toBe("function");
    expect(typeof (await second)?.stop).toBe("function");
  });

  it("delivers each message to every listener of the channel, and stops once the last one leaves", async () => {
    const { setups, subscribe } = controlledSubscribe();
    const hub = channelHub(subscribe);
    const heard: [string, FeedEvent][] = [];
    const a = hub.listen("c", (event) => heard.push(["a", event]), new AbortController().signal);
    const b = hub.listen("c", (event) => heard.push(["b", event]), new AbortController().signal);
    setups[0]?.activate();
    const [stopA, stopB] = await Promise.all([a, b]);
    setups[0]?.listener.message("released");
    setups[0]?.listener.message("acquired");
    expect(heard).toEqual([
      ["a", "released"],
      ["b", "released"],
      ["a", "acquired"],
      ["b", "acquired"],
    ]);
    stopA?.stop();
    await tick();
    expect(setups[0]?.stopped).toBe(false);
    stopB?.stop();
    // It lingers a little, for a wait that comes right after, then ends.
    await tick();
    expect(setups[0]?.stopped).toBe(false);
    await new Promise((resolve) => setTimeout(resolve, LINGER_MS + 50));
    expect(setups[0]?.stopped).toBe(true);
  });

  it("a wait that comes while the subscription lingers reuses it, active at once", async () => {
    const { setups, subscribe } = controlledSubscribe();
    const hub = channelHub(subscribe);
    const first = hub.listen("c", () => {}, new AbortController().signal);
    setups[0]?.activate();
    (await first)?.stop();
    await tick();
    const again = await hub.listen("c", () => {}, new AbortController().signal);
    expect(typeof again?.stop).toBe("function");
    expect(setups).toHaveLength(1);
    await new Promise((resolve) => setTimeout(resolve, LINGER_MS + 50));
    expect(setups[0]?.stopped).toBe(false);
    again?.stop();
  });

  it("a subscription already active replays what it heard since the time asked, and covers from then", async () => {
    const { setups, subscribe } = controlledSubscribe();
    const hub = channelHub(subscribe);
    const first = hub.listen("c", () => {}, new AbortController().signal);
    setups[0]?.activate();
    const firstListening = await first;
    setups[0]?.listener.message("released");
    await new Promise((resolve) => setTimeout(resolve, 20));
    const triedAt = performance.now();
    await new Promise((resolve) => setTimeout(resolve, 20));
    setups[0]?.listener.message("acquired");
    firstListening?.stop();
    const heard: FeedEvent[] = [];
    const again = await hub.listen("c", (event) => heard.push(event), new AbortController().signal, triedAt);
    // Only what came after the try: the release before it is not replayed.
    expect(heard).toEqual(["acquired"]);
    expect(again?.coveredFrom).toBe(triedAt);
    again?.stop();
  });

  it("a new subscription covers only from when it became active, whatever time is asked", async () => {
    const { setups, subscribe } = controlledSubscribe();
    const hub = channelHub(subscribe);
    const triedAt = performance.now();
    const listening = hub.listen("c", () => {}, new AbortController().signal, triedAt);
    await new Promise((resolve) => setTimeout(resolve, 20));
    setups[0]?.activate();
    const active = await listening;
    expect(active?.coveredFrom).toBeGreaterThan(triedAt + 10);
    active?.stop();
  });

  it("honours the setup signal: an abort resolves undefined at once, and the last one lets the setup go", async () => {
    const { setups, subscribe } = controlledSubscribe();
    const hub = channelHub(subscribe);
    const controller = new AbortController();
    const waiting = hub.listen("c", () => {}, controller.signal);
    await tick();
    controller.abort();
    expect(await waiting).toBeUndefined();
    // Nobody waits any more: the hanging setup is told so, and stopped if it ever completes.
    expect(setups[0]?.signal.aborted).toBe(true);
    setups[0]?.activate();
    await tick();
    expect(setups[0]?.stopped).toBe(true);
  });

  it("forgets a failed setup: its waiters poll, and the next wait subscribes afresh", async () => {
    const { setups, subscribe } = controlledSubscribe();
    const hub = channelHub(subscribe);
    const first = hub.listen("c", () => {}, new AbortController().signal);
    setups[0]?.fail();
    expect(await first).toBeUndefined();
    const again = hub.listen("c", () => {}, new AbortController().signal);
    expect(setups).toHaveLength(2);
    setups[1]?.activate();
    expect(typeof (await again)?.stop).toBe("function");
  });

  it("tells listeners when an active subscription breaks, and subscribes afresh next time", async () => {
    const { setups, subscribe } = controlledSubscribe();
    const hub = channelHub(subscribe);
    const heard: FeedEvent[] = [];
    const listening = hub.listen("c", (event) => heard.push(event), new AbortController().signal);
    setups[0]?.activate();
    await listening;
    setups[0]?.listener.ended();
    expect(heard).toEqual(["ended"]);
    void hub.listen("c", () => {}, new AbortController().signal);
    expect(setups).toHaveLength(2);
  });
});

/** A connection the test drives: connects when told, subscribes at once once connected. */
function controlledConnection() {
  const opened: { closed: boolean; connect(): void; refuse(): void }[] = [];
  const open = (): PubSubConnection => {
    let connected: () => void = () => {};
    let refused: (error: Error) => void = () => {};
    const ready = new Promise<void>((resolve, reject) => {
      connected = resolve;
      refused = reject;
    });
    ready.catch(() => {});
    const state = { closed: false, connect: () => connected(), refuse: () => refused(new Error("refused")) };
    opened.push(state);
    return {
      subscribe: async () => ready,
      unsubscribe: async () => undefined,
      close: () => {
        state.closed = true;
      },
    };
  };
  return { opened, open };
}

const quiet: ChannelListener = { message: () => {}, ended: () => {} };

describe("sharedConnection", () => {
  it("opens one connection for every channel, and closes it when the last channel is let go", async () => {
    const { opened, open } = controlledConnection();
    const subscribe = sharedConnection(open);
    const a = subscribe("a", quiet, new AbortController().signal);
    const b = subscribe("b", quiet, new AbortController().signal);
    opened[0]?.connect();
    const [stopA, stopB] = await Promise.all([a, b]);
    expect(opened).toHaveLength(1);
    stopA();
    expect(opened[0]?.closed).toBe(false);
    stopB();
    expect(opened[0]?.closed).toBe(true);
  });

  it("closes a connection that never connects once nobody waits for it", async () => {
    const { opened, open } = controlledConnection();
    const subscribe = sharedConnection(open);
    const controller = new AbortController();
    void subscribe("a", quiet, controller.signal).catch(() => {});
    await tick();
    expect(opened[0]?.closed).toBe(false);
    controller.abort();
    expect(opened[0]?.closed).toBe(true);
    // The next subscription opens a fresh connection rather than waiting on the hung one.
    void subscribe("a", quiet, new AbortController().signal).catch(() => {});
    expect(opened).toHaveLength(2);
  });

  it("drops a connection that failed, so the next subscription connects afresh", async () => {
    const { opened, open } = controlledConnection();
    const subscribe = sharedConnection(open);
    const failing = subscribe("a", quiet, new AbortController().signal);
    opened[0]?.refuse();
    await expect(failing).rejects.toThrow("refused");
    expect(opened[0]?.closed).toBe(true);
    const next = subscribe("a", quiet, new AbortController().signal);
    expect(opened).toHaveLength(2);
    opened[1]?.connect();
    expect(typeof (await next)).toBe("function");
  });

  it("drops a failed connection even while other channels still listen on it", async () => {
    const opened: { failNext: boolean }[] = [];
    const open = (): PubSubConnection => {
      const state = { failNext: false };
      opened.push(state);
      return {
        subscribe: async () => {
          if (state.failNext) throw new Error("connection lost");
        },
        unsubscribe: async () => undefined,
        close: () => {},
      };
    };
    const subscribe = sharedConnection(open);
    await subscribe("a", quiet, new AbortController().signal);
    (opened[0] as { failNext: boolean }).failNext = true;
    await expect(subscribe("b", quiet, new AbortController().signal)).rejects.toThrow("connection lost");
    await subscribe("c", quiet, new AbortController().signal);
    expect(opened).toHaveLength(2);
  });
});
