import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { Redis } from "@upstash/redis";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { waitUntil, within } from "../faults/support/time";
import { type PassThrough, startPassThrough } from "../support/pass-through";
import { createClient, type Endpoint } from "./helpers/clients";
import { keyPrefix } from "./helpers/keys";
import { usePrivateStack } from "./helpers/private-stack";
import { rawRequest } from "./helpers/raw-http";

const stack = usePrivateStack();
/** How long a wait for the pass-through or the proxy may take before it fails the test. */
const WAIT = { timeoutMs: 10_000 };
let passThrough: PassThrough;
/** The proxy reached through the pass-through. */
const viaPassThrough = (): Endpoint => ({ url: passThrough.url, token: stack().token });

beforeAll(async () => {
  passThrough = await startPassThrough({ target: stack().url });
});
afterAll(async () => {
  await passThrough.close();
});
beforeEach(() => {
  passThrough.faults.reset();
});

/** Reads a counter straight from the proxy, bypassing the pass-through and its faults. */
async function counter(key: string): Promise<unknown> {
  return (await rawRequest(stack(), { json: ["get", key] })).json;
}

describe("startPassThrough", () => {
  it("forwards method, path, headers and body, relays the answer, and counts what it saw", async () => {
    const before = { requests: passThrough.stats.requests, bytes: passThrough.stats.requestBytes };
    const pipelineBefore = passThrough.stats.byPath["/pipeline"] ?? 0;
    const body = JSON.stringify([["echo", "héllo"]]);
    const response = await rawRequest(viaPassThrough(), { path: "/pipeline", body, base64: true });
    expect(response.json).toEqual([{ result: Buffer.from("héllo").toString("base64") }]);
    expect(response.headers.get("upstash-sync-token")).toBeTruthy();
    expect(response.headers.get("content-type")).toBe("application/json");
    expect((await rawRequest(viaPassThrough(), { token: "wrong", json: ["ping"] })).status).toBe(401);
    expect(passThrough.stats.requests - before.requests).toBe(2);
    expect(passThrough.stats.requestBytes - before.bytes).toBe(Buffer.byteLength(body) + '["ping"]'.length);
    expect((passThrough.stats.byPath["/pipeline"] ?? 0) - pipelineBefore).toBe(1);
  });

  it("passes a subscription's event stream on live: the confirmation, then each message; closing it ends the proxy's", async () => {
    const channel = keyPrefix("pt-stream");
    const aborted = new AbortController();
    const response = await fetch(`${passThrough.url}/subscribe/${channel}`, {
      method: "POST",
      headers: { authorization: `Bearer ${stack().token}`, accept: "text/event-stream" },
      body: "[]",
      signal: aborted.signal,
    });
    const reader = (response.body as ReadableStream<Uint8Array>).getReader();
    let text = "";
    const readUntil = async (part: string) => {
      while (!text.includes(part)) {
        const { value, done } = await reader.read();
        if (done) throw new Error(`the stream ended before ${part}`);
        text += new TextDecoder().decode(value);
      }
    };
    await readUntil(`subscribe,${channel},1`);
    await rawRequest(stack(), { json: ["publish", channel, "hello"] });
    await readUntil(`message,${channel},hello`);
    expect(stack().proxy.openSubscriptions()).toBe(1);
    aborted.abort();
    await waitUntil(() => stack().proxy.openSubscriptions() === 0, "the subscription closed", WAIT);
  });

  it("drops the client's event stream when the target drops the subscription, as Upstash's would end", async () => {
    // A target that confirms a subscription, then loses the connection (a restart, a killed socket).
    const target = createServer((req, res) => {
      res.writeHead(200, { "content-type": "text/event-stream" });
      res.write("data: subscribe,c,1\n\n");
      setTimeout(() => req.socket.destroy(), 50);
    });
    await new Promise<void>((resolve) => target.listen(0, "127.0.0.1", resolve));
    const dropping = await startPassThrough({
      target: `http://127.0.0.1:${(target.address() as AddressInfo).port}`,
    });
    try {
      const response = await fetch(`${dropping.url}/subscribe/c`, { method: "POST", body: "[]" });
      const reader = (response.body as ReadableStream<Uint8Array>).getReader();
      const ended = (async () => {
        for (;;) if ((await reader.read()).done) return "ended";
      })().catch(() => "failed");
      // Before, the client's stream stayed open with nothing more to hear: this waited out its 5 s bound.
      expect(await within(ended, 5_000, "the client's stream to end")).toBe("failed");
    } finally {
      await dropping.close();
      await new Promise((resolve) => target.close(resolve));
    }
  });

  it("proves that no request was sent when the client fails locally", async () => {
    const before = passThrough.stats.requests;
    await expect(createClient(viaPassThrough()).pipeline().exec()).rejects.toThrow(/Pipeline is empty/);
    expect(passThrough.stats.requests).toBe(before);
  });

  it("dropReplies: the command runs, the reply is lost, and the client's default retry runs it again", async () => {
    const key = keyPrefix("drop");
    const { url, token } = viaPassThrough();
    const redis = new Redis({ url, token, enableTelemetry: false });
    const before = passThrough.stats.requests;
    passThrough.faults.dropReplies(1);
    // The first INCR ran but its reply was dropped; the retry ran it a second time.
    expect(await redis.incr(key)).toBe(2);
    expect(passThrough.stats.requests - before).toBe(2);
    expect(await counter(key)).toEqual({ result: "2" });
  });

  it("dropReplies: without retries left, fetch throws although the command ran", async () => {
    const key = keyPrefix("drop-no-retry");
    passThrough.faults.dropReplies(2);
    const redis = createClient(viaPassThrough(), { retry: { retries: 1, backoff: () => 0 } });
    await expect(redis.incr(key)).rejects.toThrow(/fetch failed/);
    expect(await counter(key)).toEqual({ result: "2" });
  });

  it("ghostNext: the client's connection is cut and it re-sends, yet the first copy still runs, later", async () => {
    const key = keyPrefix("ghost");
    const { url, token } = viaPassThrough();
    const redis = new Redis({ url, token, enableTelemetry: false, retry: { retries: 1, backoff: () => 10 } });
    const [started, ran] = [performance.now(), passThrough.ran()];
    passThrough.faults.ghostNext(1, 1_000);
    expect(await redis.incr(key)).toBe(1); // the re-sent copy
    expect(await counter(key)).toEqual({ result: "1" });
    await waitUntil(() => passThrough.ran() - ran === 2, "both copies ran", WAIT); // the first copy arrived after all (not a fixed pause)
    expect(await counter(key)).toEqual({ result: "2" });
    // A lower bound only: a busy machine can forward it later, never sooner.
    expect(performance.now() - started).toBeGreaterThanOrEqual(950);
  });

  it("ghostHeld: the first copy runs only once the test lets it go, however long that takes", async () => {
    const key = keyPrefix("ghost-held");
    const { url, token } = viaPassThrough();
    const redis = new Redis({ url, token, enableTelemetry: false, retry: { retries: 1, backoff: () => 10 } });
    const ran = passThrough.ran();
    const land = passThrough.faults.ghostHeld(1);
    expect(await redis.incr(key)).toBe(1); // the re-sent copy
    // Later calls pass, the first copy still held: no timed delay for them to outrun.
    for (let call = 2; call <= 4; call++) expect(await redis.incr(key)).toBe(call);
    expect(passThrough.ran() - ran).toBe(4);
    land();
    await waitUntil(() => passThrough.ran() - ran === 5, "5 requests ran", WAIT);
    expect(await counter(key)).toEqual({ result: "5" });
    // Let go before it arrives, a copy is forwarded at once (after its connection was cut all the same).
    passThrough.faults.ghostHeld(1)();
    expect(await redis.incr(key)).toBeGreaterThanOrEqual(6);
    await waitUntil(() => passThrough.ran() - ran === 7, "7 requests ran", WAIT);
    expect(await counter(key)).toEqual({ result: "7" });
  });

  it("refuse: sockets are destroyed before anything is forwarded", async () => {
    const key = keyPrefix("refuse");
    passThrough.faults.refuse();
    const before = passThrough.stats.requests;
    const redis = createClient(viaPassThrough(), { retry: { retries: 1, backoff: () => 0 } });
    await expect(redis.incr(key)).rejects.toThrow(/fetch failed/);
    expect(passThrough.stats.requests - before).toBe(2);
    expect(await counter(key)).toEqual({ result: null });
    passThrough.faults.reset();
    expect(await createClient(viaPassThrough()).incr(key)).toBe(1);
  });

  it("refuse(n): only the next n requests are refused", async () => {
    const key = keyPrefix("refuse-n");
    passThrough.faults.refuse(1);
    const before = passThrough.stats.requests;
    // The first attempt is refused, the retry gets through: the command ran once.
    const redis = createClient(viaPassThrough(), { retry: { retries: 1, backoff: () => 0 } });
    expect(await redis.incr(key)).toBe(1);
    expect(passThrough.stats.requests - before).toBe(2);
  });

  it("status5xx: answers 503 JSON without forwarding, and the client does not retry", async () => {
    const key = keyPrefix("503");
    passThrough.faults.status5xx(1);
    const before = passThrough.stats.requests;
    const redis = createClient(viaPassThrough(), { retry: { retries: 3, backoff: () => 10 } });
    await expect(redis.incr(key)).rejects.toThrow(/pass-through: injected 503/);
    expect(passThrough.stats.requests - before).toBe(1);
    expect(await counter(key)).toEqual({ result: null });
    const raw = await rawRequest(viaPassThrough(), { json: ["ping"] });
    expect(raw.status).toBe(200);
  });

  it("latency: delays forwarding by at least the given time", async () => {
    passThrough.faults.latency(150);
    const started = performance.now();
    expect(await createClient(viaPassThrough()).ping()).toBe("PONG");
    // A lower bound only: a busy machine can make it slower, never faster.
    expect(performance.now() - started).toBeGreaterThanOrEqual(140);
  });

  it("answers 502 JSON when the target is unreachable", async () => {
    const orphan = await startPassThrough({ target: "http://127.0.0.1:1" });
    try {
      const response = await rawRequest({ url: orphan.url, token: "t" }, { json: ["ping"] });
      expect(response.status).toBe(502);
      expect(response.json).toEqual({
        error: expect.stringMatching(/^pass-through: upstream request failed/),
      });
    } finally {
      await orphan.close();
    }
  });
});
