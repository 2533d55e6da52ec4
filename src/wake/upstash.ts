import { backgroundTimer } from "../clock";
import type { ChannelFeed, ChannelListener, SubscribeChannel } from "./feed";
import { channelHub } from "./hub";

/** The part of `@upstash/redis`'s `Redis` that says where its REST endpoint is and how to authenticate. */
interface UpstashHttp {
  readonly client: { readonly baseUrl: string; readonly headers: Record<string, string> };
}

const CONFIRM_WITHIN_MS = 2_000; // ms for the server to confirm a subscription, else poll without it

/** Whether `client` is `@upstash/redis` (or built on it): a REST base URL and headers. */
function isUpstashHttp(client: unknown): client is UpstashHttp {
  const http = (client as Partial<UpstashHttp> | null)?.client;
  return typeof http?.baseUrl === "string" && typeof http.headers === "object" && http.headers !== null;
}

/** REST `subscribe` SSE streams (one billed SUBSCRIBE per channel), read directly to see when one ends. */
export function upstashSubscriber(client: UpstashHttp): SubscribeChannel {
  return (channel, listener, unwanted) =>
    new Promise((resolve, reject) => {
      const stream = new AbortController();
      let active = false;
      const stop = () => stream.abort();
      const give = (error: Error) => {
        stop();
        reject(error);
      };
      const onUnwanted = () => give(new Error("the subscription is no longer wanted"));
      unwanted.addEventListener("abort", onUnwanted, { once: true });
      const cancelTimer = backgroundTimer(CONFIRM_WITHIN_MS, () =>
        give(new Error(`no subscription confirmed within ${CONFIRM_WITHIN_MS} ms`)),
      );
      const confirmed = () => {
        active = true;
        cancelTimer();
        unwanted.removeEventListener("abort", onUnwanted);
        resolve(stop);
      };
      const { baseUrl, headers } = client.client;
      // Unescaped, as @upstash/redis's own subscribe() joins its path: the name (`lock-events:<hex>`) is URL-safe.
      fetch(`${baseUrl}/subscribe/${channel}`, {
        method: "POST",
        headers: { ...headers, Accept: "text/event-stream" },
        body: "[]",
        signal: stream.signal,
      })
        .then((response) => read(response, channel, listener, confirmed))
        .catch(() => {
          // Aborted, refused or broken: told below.
        })
        .finally(() => {
          cancelTimer();
          if (active) listener.ended();
          else give(new Error("the subscription stream closed before it was confirmed"));
        });
    });
}

/** Reads the stream's `data:` lines until it ends: the confirmation, then the channel's messages. */
async function read(
  response: Response,
  channel: string,
  listener: ChannelListener,
  confirmed: () => void,
): Promise<void> {
  if (!response.ok || !response.body) throw new Error(`subscribe answered ${response.status}`);
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  let buffer = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    buffer += decoder.decode(value, { stream: true });
    const lines = buffer.split("\n");
    buffer = lines.pop() ?? "";
    for (const line of lines) {
      if (!line.startsWith("data: ")) continue;
      const [kind, name, ...payload] = line.slice(6).split(",");
      if (name !== channel) continue;
      if (kind === "subscribe") confirmed();
      else if (kind === "message") listener.message(unquoted(payload.join(",")));
    }
  }
}

/** A payload the server sent as a JSON string reads as that string. */
function unquoted(payload: string): string {
  if (!payload.startsWith('"')) return payload;
  try {
    return String(JSON.parse(payload));
  } catch {
    return payload;
  }
}

const ownFeeds = new WeakMap<object, ChannelFeed>();

/** An `@upstash/redis` client's one feed: its fair locks' and semaphores', and every lock's once enabled. */
export function upstashFeedOf(client: unknown): ChannelFeed | undefined {
  if (!isUpstashHttp(client)) return undefined;
  if (!ownFeeds.has(client)) ownFeeds.set(client, channelHub(upstashSubscriber(client)));
  return ownFeeds.get(client);
}
