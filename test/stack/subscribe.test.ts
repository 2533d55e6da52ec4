import { describe, expect, it } from "vitest";
import { createClient } from "./helpers/clients";
import { keyPrefix } from "./helpers/keys";
import { usePrivateStack } from "./helpers/private-stack";

// The server-sent-events subscribe endpoints, as @upstash/redis's subscribe() and psubscribe() use them.
const stack = usePrivateStack();

/** Opens a raw SSE stream and collects its `data:` lines. */
async function openStream(path: string, token: string) {
  const controller = new AbortController();
  const response = await fetch(`${stack().url}${path}`, {
    method: "POST",
    headers: {
      authorization: `Bearer ${token}`,
      accept: "text/event-stream",
      "content-type": "application/json",
    },
    body: "[]",
    signal: controller.signal,
  });
  const lines: string[] = [];
  const waiters: (() => void)[] = [];
  /** How the body ended: "ended" when the server finished it, "failed" when reading it threw. */
  const done = (async (): Promise<"ended" | "failed"> => {
    if (!response.body) return "ended";
    const decoder = new TextDecoder();
    let buffered = "";
    const reader = response.body.getReader();
    try {
      for (let read = await reader.read(); !read.done; read = await reader.read()) {
        buffered += decoder.decode(read.value, { stream: true });
        const parts = buffered.split("\n");
        buffered = parts.pop() ?? "";
        for (const line of parts) if (line.startsWith("data: ")) lines.push(line.slice(6));
        for (const wake of waiters.splice(0)) wake();
      }
      return "ended";
    } catch {
      // Aborted by the test, or cut by the proxy.
      return "failed";
    }
  })();
  const until = async (count: number) => {
    while (lines.length < count) await new Promise<void>((resolve) => waiters.push(resolve));
  };
  return { response, lines, until, close: () => controller.abort(), done };
}

/** Subscribers Redis counts on `channel`. */
async function subscribers(channel: string): Promise<number> {
  const redis = createClient(stack());
  const [, count] = (await redis.eval(`return redis.call("PUBSUB", "NUMSUB", ARGV[1])`, [], [channel])) as [
    string,
    number,
  ];
  return count;
}

/** Pattern subscriptions Redis counts, over all connections. */
async function patternSubscriptions(): Promise<number> {
  return (await createClient(stack()).eval(`return redis.call("PUBSUB", "NUMPAT")`, [], [])) as number;
}

/** Polls until `read` gives 0 (a closed stream's connection is dropped asynchronously), then returns it. */
async function settlesAtZero(read: () => number | Promise<number>): Promise<number> {
  for (let poll = 0; poll < 100 && (await read()) > 0; poll++) {
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return read();
}

describe("POST /subscribe/<channel>", () => {
  it("streams the subscribe confirmation and each message as SSE data lines", async () => {
    const channel = keyPrefix("sse");
    const stream = await openStream(`/subscribe/${encodeURIComponent(channel)}`, stack().token);
    expect(stream.response.status).toBe(200);
    expect(stream.response.headers.get("content-type")).toBe("text/event-stream");
    // Upstash returns a sync token on every response; the client keeps the last it saw (§6).
    expect(stream.response.headers.get("upstash-sync-token")).toMatch(/\S/);
    await stream.until(1);
    expect(stream.lines[0]).toBe(`subscribe,${channel},1`);

    const redis = createClient(stack());
    expect(await redis.publish(channel, "hello")).toBe(1);
    await stream.until(2);
    expect(stream.lines[1]).toBe(`message,${channel},hello`);

    stream.close();
    await stream.done;
    // The proxy drops its Redis subscription when the client goes away.
    expect(await settlesAtZero(() => subscribers(channel))).toBe(0);
  });

  it("answers a wrong token with the JSON 401", async () => {
    const response = await fetch(`${stack().url}/subscribe/ch`, {
      method: "POST",
      headers: { authorization: "Bearer wrong", accept: "text/event-stream" },
      body: "[]",
    });
    expect(response.status).toBe(401);
    expect(await response.json()).toEqual({ error: "Unauthorized" });
  });

  // The client puts the channel in the URL unencoded: braces are percent-encoded by fetch and a slash
  // stays a path separator, both of which the proxy undoes; "?" and "#" cannot survive that, which is
  // why the lock's own channel names are base64url.
  it("works with @upstash/redis's subscribe(), channel names with braces and slashes included", async () => {
    const redis = createClient(stack());
    const channel = `${keyPrefix("sse-client")}:{a/b}`;
    const subscriber = redis.subscribe<string>(channel);
    const confirmed = new Promise<number>((resolve) => subscriber.on("subscribe", resolve));
    const received = new Promise<string>((resolve) =>
      subscriber.on("message", (event) => resolve(event.message)),
    );
    expect(await confirmed).toBe(1);
    await redis.publish(channel, "released");
    expect(await received).toBe("released");
    await subscriber.unsubscribe();
  });
});

// One test at a time: PUBSUB NUMPAT counts the patterns of the whole server.
describe("POST /psubscribe/<pattern>", () => {
  it("streams the psubscribe confirmation and each matching message with its channel", async () => {
    const prefix = keyPrefix("psse");
    const pattern = `${prefix}*`;
    const stream = await openStream(`/psubscribe/${encodeURIComponent(pattern)}`, stack().token);
    expect(stream.response.status).toBe(200);
    expect(stream.response.headers.get("content-type")).toBe("text/event-stream");
    await stream.until(1);
    expect(stream.lines[0]).toBe(`psubscribe,${pattern},1`);

    const redis = createClient(stack());
    expect(await redis.publish(`${prefix}one`, "hello")).toBe(1);
    expect(await redis.publish(`${keyPrefix("elsewhere")}one`, "not matched")).toBe(0);
    expect(await redis.publish(`${prefix}two`, "again")).toBe(1);
    await stream.until(3);
    expect(stream.lines.slice(1)).toEqual([
      `pmessage,${pattern},${prefix}one,hello`,
      `pmessage,${pattern},${prefix}two,again`,
    ]);

    stream.close();
    await stream.done;
    expect(await settlesAtZero(patternSubscriptions)).toBe(0);
  });

  it("answers a wrong token with the JSON 401", async () => {
    const response = await fetch(`${stack().url}/psubscribe/ch*`, {
      method: "POST",
      headers: { authorization: "Bearer wrong", accept: "text/event-stream" },
      body: "[]",
    });
    expect(response.status).toBe(401);
    expect(await response.json()).toEqual({ error: "Unauthorized" });
  });

  it("works with @upstash/redis's psubscribe(), and unsubscribing leaves no pattern in Redis", async () => {
    const redis = createClient(stack());
    const prefix = keyPrefix("psse-client");
    const pattern = `${prefix}*`;
    const subscriber = redis.psubscribe<{ event: string }>(pattern);
    const confirmed = new Promise<number>((resolve) => subscriber.on("psubscribe", resolve));
    const received = new Promise<{ pattern: string; channel: string; message: unknown }>((resolve) =>
      subscriber.on("pmessage", resolve),
    );
    expect(await confirmed).toBe(1);
    // The client JSON-parses pattern messages (plain text is an "error" event), so publish JSON.
    await redis.publish(`${prefix}lock`, { event: "released" });
    expect(await received).toEqual({ pattern, channel: `${prefix}lock`, message: { event: "released" } });
    await subscriber.unsubscribe();
    expect(await settlesAtZero(patternSubscriptions)).toBe(0);
  });
});

describe("the subscriptions counter", () => {
  it("counts each stream opened on /subscribe and /psubscribe, and no command", async () => {
    const { stats } = stack().proxy;
    const before = { subscriptions: stats.subscriptions, commands: stats.commands };
    const channel = await openStream(`/subscribe/${encodeURIComponent(keyPrefix("count"))}`, stack().token);
    const pattern = await openStream(`/psubscribe/${encodeURIComponent(keyPrefix("count"))}*`, stack().token);
    await Promise.all([channel.until(1), pattern.until(1)]);
    expect(stats.subscriptions - before.subscriptions).toBe(2);
    expect(stats.commands).toBe(before.commands);
    const rejected = await fetch(`${stack().url}/subscribe/ch`, {
      method: "POST",
      headers: { authorization: "Bearer wrong" },
    });
    expect(rejected.status).toBe(401);
    expect(stats.subscriptions - before.subscriptions).toBe(2);
    channel.close();
    pattern.close();
    await Promise.all([channel.done, pattern.done]);
  });
});

// Tests of the library simulate a subscription that the server ends, or that the network breaks.
describe("ending and dropping subscription streams", () => {
  const proxy = () => stack().proxy;

  it("endSubscriptions() ends a @upstash/redis subscriber's stream quietly, and a new subscribe works", async () => {
    // Earlier tests' streams close asynchronously after their clients abort.
    expect(await settlesAtZero(() => proxy().openSubscriptions())).toBe(0);
    const redis = createClient(stack());
    const channel = keyPrefix("sse-end");
    const first = redis.subscribe<string>(channel);
    const heard: string[] = [];
    first.on("message", (event) => heard.push(event.message));
    const errors: unknown[] = [];
    first.on("error", (error) => errors.push(error));
    const confirmed = new Promise<number>((resolve) => first.on("subscribe", resolve));
    expect(await confirmed).toBe(1);
    expect(proxy().openSubscriptions()).toBe(1);

    expect(proxy().endSubscriptions()).toBe(1);
    expect(proxy().openSubscriptions()).toBe(0);
    expect(await settlesAtZero(() => subscribers(channel))).toBe(0);
    expect(await redis.publish(channel, "unheard")).toBe(0);
    expect(proxy().endSubscriptions()).toBe(0);

    const second = redis.subscribe<string>(channel);
    const reconfirmed = new Promise<number>((resolve) => second.on("subscribe", resolve));
    const received = new Promise<string>((resolve) =>
      second.on("message", (event) => resolve(event.message)),
    );
    expect(await reconfirmed).toBe(1);
    expect(proxy().openSubscriptions()).toBe(1);
    expect(await redis.publish(channel, "heard")).toBe(1);
    expect(await received).toBe("heard");
    expect(heard).toEqual([]);
    expect(errors).toEqual([]);
    await Promise.all([first.unsubscribe(), second.unsubscribe()]);
    expect(await settlesAtZero(() => proxy().openSubscriptions())).toBe(0);
  });

  it("endSubscriptions() finishes the body normally, after the events already sent", async () => {
    expect(await settlesAtZero(() => proxy().openSubscriptions())).toBe(0);
    const prefix = keyPrefix("sse-end-raw");
    const channel = await openStream(`/subscribe/${encodeURIComponent(prefix)}`, stack().token);
    const pattern = await openStream(`/psubscribe/${encodeURIComponent(`${prefix}*`)}`, stack().token);
    await Promise.all([channel.until(1), pattern.until(1)]);
    expect(proxy().openSubscriptions()).toBe(2);
    expect(proxy().endSubscriptions()).toBe(2);
    expect(await channel.done).toBe("ended");
    expect(await pattern.done).toBe("ended");
    expect(channel.lines).toEqual([`subscribe,${prefix},1`]);
    expect(pattern.lines).toEqual([`psubscribe,${prefix}*,1`]);
    expect(await settlesAtZero(() => subscribers(prefix))).toBe(0);
    expect(await settlesAtZero(patternSubscriptions)).toBe(0);
  });

  // A raw stream: @upstash/redis's subscribe() reports a broken stream with console.error, which the suite's
  // strict console turns into a failure.
  it("dropSubscriptions() breaks the stream's socket and closes its Redis connection", async () => {
    expect(await settlesAtZero(() => proxy().openSubscriptions())).toBe(0);
    const name = keyPrefix("sse-drop");
    const stream = await openStream(`/subscribe/${encodeURIComponent(name)}`, stack().token);
    await stream.until(1);
    expect(proxy().openSubscriptions()).toBe(1);
    expect(proxy().dropSubscriptions()).toBe(1);
    expect(proxy().openSubscriptions()).toBe(0);
    expect(await stream.done).toBe("failed");
    expect(await settlesAtZero(() => subscribers(name))).toBe(0);
    expect(proxy().dropSubscriptions()).toBe(0);

    const again = await openStream(`/subscribe/${encodeURIComponent(name)}`, stack().token);
    await again.until(1);
    expect(again.lines).toEqual([`subscribe,${name},1`]);
    again.close();
    await again.done;
  });

  it("openSubscriptions() counts a stream until its client goes away", async () => {
    expect(await settlesAtZero(() => proxy().openSubscriptions())).toBe(0);
    const stream = await openStream(`/subscribe/${encodeURIComponent(keyPrefix("sse-open"))}`, stack().token);
    await stream.until(1);
    expect(proxy().openSubscriptions()).toBe(1);
    stream.close();
    await stream.done;
    expect(await settlesAtZero(() => proxy().openSubscriptions())).toBe(0);
  });
});
