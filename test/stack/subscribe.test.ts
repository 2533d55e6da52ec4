import { describe, expect, it } from "vitest";
import { createClient } from "./helpers/clients";
import { keyPrefix } from "./helpers/keys";
import { usePrivateStack } from "./helpers/private-stack";

// The server-sent-events subscribe endpoint, as @upstash/redis's subscribe() uses it.
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
  const done = (async () => {
    if (!response.body) return;
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
    } catch {
      // Aborted by the test.
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

describe("POST /subscribe/<channel>", () => {
  it("streams the subscribe confirmation and each message as SSE data lines", async () => {
    const channel = keyPrefix("sse");
    const stream = await openStream(`/subscribe/${encodeURIComponent(channel)}`, stack().token);
    expect(stream.response.status).toBe(200);
    expect(stream.response.headers.get("content-type")).toBe("text/event-stream");
    await stream.until(1);
    expect(stream.lines[0]).toBe(`subscribe,${channel},1`);

    const redis = createClient(stack());
    expect(await redis.publish(channel, "hello")).toBe(1);
    await stream.until(2);
    expect(stream.lines[1]).toBe(`message,${channel},hello`);

    stream.close();
    await stream.done;
    // The proxy drops its Redis subscription when the client goes away.
    for (let poll = 0; poll < 100 && (await subscribers(channel)) > 0; poll++) {
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    expect(await subscribers(channel)).toBe(0);
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
