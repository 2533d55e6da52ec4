// The reading of Upstash's subscription streams, against a scripted fetch. The real client and the
// proxy's streams (ended cleanly, dropped) run in test/wake.
import { afterEach, describe, expect, it, vi } from "vitest";
import { upstashSubscriber } from "../../../src/wake/upstash";

const client = { client: { baseUrl: "https://example.upstash.io", headers: { authorization: "Bearer t" } } };

/** Stubs fetch with a stream whose chunks the test writes, and records the request. */
function streaming() {
  let controller!: ReadableStreamDefaultController<Uint8Array>;
  const body = new ReadableStream<Uint8Array>({ start: (c) => (controller = c) });
  const requests: { url: string; init: RequestInit }[] = [];
  vi.stubGlobal("fetch", async (url: string, init: RequestInit) => {
    requests.push({ url, init });
    init.signal?.addEventListener("abort", () => controller.error(new DOMException("aborted", "AbortError")));
    return new Response(body, { headers: { "content-type": "text/event-stream" } });
  });
  const encoder = new TextEncoder();
  return {
    requests,
    write: (text: string) => controller.enqueue(encoder.encode(text)),
    end: () => controller.close(),
  };
}

afterEach(() => {
  vi.unstubAllGlobals();
});

describe("upstashSubscriber", () => {
  it("confirms on the subscribe line, hands on the channel's messages, and reports a quiet end", async () => {
    const stream = streaming();
    const heard: string[] = [];
    const subscribing = upstashSubscriber(client)(
      "lock-events:ab",
      {
        message: (message) => heard.push(message),
        ended: () => heard.push("(ended)"),
      },
      new AbortController().signal,
    );
    stream.write("data: subscribe,lock-events:ab,1\n\n");
    const stop = await subscribing;
    // As @upstash/redis's subscribe() sends it: the colon unescaped, relying on no decoding by the server.
    expect(stream.requests[0]?.url).toBe("https://example.upstash.io/subscribe/lock-events:ab");
    expect(stream.requests[0]?.init.headers).toMatchObject({
      authorization: "Bearer t",
      Accept: "text/event-stream",
    });
    // Messages may come split across chunks; a JSON-quoted payload reads as its string.
    stream.write("data: message,lock-events:ab,rel");
    stream.write('eased\n\ndata: message,other,acquired\n\ndata: message,lock-events:ab,"acquired"\n\n');
    stream.write("data: message,lock-events:ab,granted:ab12:3:2500:1\n\n");
    await vi.waitFor(() => expect(heard).toHaveLength(3));
    expect(heard).toEqual(["released", "acquired", "granted:ab12:3:2500:1"]);
    stream.end();
    await vi.waitFor(() => expect(heard.at(-1)).toBe("(ended)"));
    stop();
  });

  it("rejects, rather than report an end, when the stream closes before the confirmation", async () => {
    const stream = streaming();
    const subscribing = upstashSubscriber(client)(
      "c",
      { message: () => {}, ended: () => {} },
      new AbortController().signal,
    );
    stream.end();
    await expect(subscribing).rejects.toThrow(/before it was confirmed/);
  });

  it("lets go of a setup nobody wants any more", async () => {
    streaming();
    const unwanted = new AbortController();
    const subscribing = upstashSubscriber(client)(
      "c",
      { message: () => {}, ended: () => {} },
      unwanted.signal,
    );
    unwanted.abort();
    await expect(subscribing).rejects.toThrow(/no longer wanted/);
  });
});
