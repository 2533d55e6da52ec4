import type { IncomingMessage, ServerResponse } from "node:http";
import type { RespConnectionOptions } from "../resp/connection";
import { type PubSubEvent, RespSubscriber } from "../resp/subscriber";
import { CORS_RESPONSE_HEADERS } from "./cors";

/** The path prefix of Upstash's server-sent-events subscribe endpoint. */
export const SUBSCRIBE_PREFIX = "/subscribe/";

/** The channel named by a `/subscribe/<channel>` path, or undefined for any other path. */
export function subscribedChannel(pathname: string): string | undefined {
  if (!pathname.startsWith(SUBSCRIBE_PREFIX)) return undefined;
  const channel = decodeURIComponent(pathname.slice(SUBSCRIBE_PREFIX.length));
  return channel === "" ? undefined : channel;
}

/**
 * `POST /subscribe/<channel>`: a server-sent-events stream of the channel, in the form `@upstash/redis`'s
 * `subscribe()` reads: `data: subscribe,<channel>,<count>` once Redis confirms, then
 * `data: message,<channel>,<payload>` per message. Each stream has its own Redis connection in subscriber mode,
 * closed when the client goes away; the stream ends if Redis goes away.
 */
export function streamSubscription(
  req: IncomingMessage,
  res: ServerResponse,
  channel: string,
  redis: RespConnectionOptions,
): void {
  res.writeHead(200, {
    ...CORS_RESPONSE_HEADERS,
    "Content-Type": "text/event-stream",
    "Cache-Control": "no-cache",
    Connection: "keep-alive",
  });
  res.flushHeaders();
  const subscriber = new RespSubscriber(redis, [channel], {
    onEvent: (event) => res.write(`data: ${eventText(event)}\n\n`),
    onEnd: () => res.end(),
  });
  // Drain whatever body the client sent; the subscription needs none.
  req.resume();
  res.on("close", () => subscriber.close());
}

function eventText(event: PubSubEvent): string {
  return event.kind === "subscribe"
    ? `subscribe,${event.channel},${event.count}`
    : `message,${event.channel},${event.payload.toString("utf8")}`;
}
