// One subscription per channel for a client's waiters, counted listener by listener, against a
// scripted subscribe. The real feeds run in test/clients/feeds.test.ts and test/wake.
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import type { ChannelListener, FeedEvent } from "../../../src/wake/feed";
import { channelHub, LINGER_MS } from "../../../src/wake/hub";

beforeEach(() => {
  vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout", "performance"] });
});
afterEach(() => {
  vi.useRealTimers();
});

/** A subscribe that confirms at once (a microtask later) and records what it was asked. */
function scripted() {
  const opened: { channel: string; listener: ChannelListener; stopped: boolean }[] = [];
  const subscribe = (channel: string, listener: ChannelListener) =>
    new Promise<() => void>((resolve) => {
      const entry = { channel, listener, stopped: false };
      opened.push(entry);
      queueMicrotask(() => resolve(() => (entry.stopped = true)));
    });
  return { opened, hub: channelHub(subscribe) };
}

const listen = (
  hub: ReturnType<typeof channelHub>,
  heard: FeedEvent[],
  signal = new AbortController().signal,
) => hub.listen("c", (event) => heard.push(event), signal);

describe("channelHub", () => {
  it("shares one subscription among listeners, and tells each what the channel carries", async () => {
    const { opened, hub } = scripted();
    const a: FeedEvent[] = [];
    const b: FeedEvent[] = [];
    const [first, second] = await Promise.all([listen(hub, a), listen(hub, b)]);
    expect(opened).toHaveLength(1);
    expect(hub.active("c")).toBe(true);
    opened[0]?.listener.message("released");
    opened[0]?.listener.message("granted:ab:1:300:1");
    expect(a).toEqual(["released", "granted:ab:1:300:1"]);
    expect(b).toEqual(a);
    first?.stop();
    opened[0]?.listener.message("acquired");
    expect(a).toHaveLength(2);
    expect(b).toHaveLength(3);
    second?.stop();
  });

  it("ends the subscription only when the last listener left, and lingers a moment for the next", async () => {
    const { opened, hub } = scripted();
    const first = await listen(hub, []);
    const second = await listen(hub, []);
    first?.stop();
    second?.stop();
    await vi.advanceTimersByTimeAsync(LINGER_MS - 10);
    expect(opened[0]?.stopped).toBe(false);
    const third = await listen(hub, []);
    expect(opened).toHaveLength(1);
    third?.stop();
    await vi.advanceTimersByTimeAsync(LINGER_MS);
    expect(opened[0]?.stopped).toBe(true);
    expect(hub.active("c")).toBe(false);
  });

  it("a subscription that broke tells its listeners, is forgotten, and the next listener subscribes afresh", async () => {
    const { opened, hub } = scripted();
    const heard: FeedEvent[] = [];
    const old = await listen(hub, heard);
    opened[0]?.listener.ended();
    expect(heard).toEqual(["ended"]);
    expect(hub.active("c")).toBe(false);
    const fresh = await listen(hub, []);
    expect(opened).toHaveLength(2);
    // The old listener's late stop does not touch the new subscription.
    old?.stop();
    await vi.advanceTimersByTimeAsync(LINGER_MS * 2);
    expect(opened[1]?.stopped).toBe(false);
    fresh?.stop();
  });

  it("a listener that gives up while the subscription is pending is let go, and the setup with it", async () => {
    const { hub } = scripted();
    const abort = new AbortController();
    const pending = listen(hub, [], abort.signal);
    abort.abort();
    expect(await pending).toBeUndefined();
  });

  it("covers a listener from the moment it joined an active subscription", async () => {
    const { hub } = scripted();
    const first = await listen(hub, []);
    await vi.advanceTimersByTimeAsync(100);
    const joined = performance.now();
    const second = await listen(hub, []);
    expect(second?.since).toBe(joined);
    expect(first?.since).toBeLessThan(joined);
  });

  it("a lock's waiter joining an active subscription hears what is announced right after it asked", async () => {
    const { hub, opened } = scripted();
    const events = hub.lockEvents("k");
    const keep = await events.listen(() => {}, new AbortController().signal);
    expect(keep).toBeDefined();
    expect(events.active()).toBe(true);
    // The waiter asks, then sends its first try in the same tick: a release announced before the
    // try's reply must reach it, or a poll has to cover for it.
    const heard: FeedEvent[] = [];
    const joining = events.listen((event) => heard.push(event), new AbortController().signal);
    opened[0]?.listener.message("released");
    expect(heard).toEqual(["released"]);
    expect((await joining)?.since).toBeLessThanOrEqual(performance.now());
  });

  // A server locking per user meets a new lock key per request: what the hub keeps per key is bounded.
  it("keeps the lock events of the 1,000 most recently used keys only", () => {
    const { hub } = scripted();
    const early = hub.lockEvents("early");
    const hot = hub.lockEvents("hot");
    for (let n = 0; n < 1_500; n++) {
      hub.lockEvents(`user-${n}`);
      if (n % 500 === 0) expect(hub.lockEvents("hot")).toBe(hot);
    }
    expect(hub.lockEvents("hot")).toBe(hot); // last used 500 keys ago: kept
    expect(hub.lockEvents("early")).not.toBe(early); // 1,500 keys ago: forgotten, made anew
    expect(hub.lockEvents("user-1499")).toBe(hub.lockEvents("user-1499"));
  });
});
