import type { IncomingMessage, ServerResponse } from "node:http";
import type { RespConnectionOptions } from "../resp/connection";
import { type PubSubEvent, RespSubscriber, type Subscription } from "../resp/subscriber";
import { CORS_RESPONSE_HEADERS } from "./cors";

/** The path prefixes of Upstash's server-sent-events endpoints, by what they subscribe to. */
const PREFIXES = [
  { prefix: "/subscribe/", kind: "channel" },
  { prefix: "/psubscribe/", kind: "pattern" },
] as const;

/**
 * The subscription a `/subscribe/<channel>` or `/psubscribe/<pattern>` path asks for, or undefined for any
 * other path (an empty name included).
 */
export function requestedSubscription(pathname: string): Subscription | undefined {
  for (const { prefix, kind } of PREFIXES) {
    if (pathname.startsWith(prefix)) {
      const name = decodeURIComponent(pathname.slice(prefix.length));
      return name === "" ? undefined : { kind, names: [name] };
    }
  }
  return undefined;
}

/**
 * `POST /subscribe/<channel>` and `POST /psubscribe/<pattern>`: a server-sent-events stream, in the form
 * `@upstash/redis`'s `subscribe()` and `psubscribe()` read: `data: subscribe,<channel>,<count>` (or
 * `psubscribe,<pattern>,<count>`) once Redis confirms, then `data: message,<channel>,<payload>` (or
 * `pmessage,<pattern>,<channel>,<payload>`) per message. Each stream has its own Redis connection in
 * subscriber mode, closed when the client goes away; the stream ends if Redis goes away.
 */
export function streamSubscription(
  req: IncomingMessage,
  res: ServerResponse,
  subscription: Subscription,
  redis: RespConnectionOptions,
): void {
  res.writeHead(200, {
    ...CORS_RESPONSE_HEADERS,
    "Content-Type": "text/event-stream",
    "Cache-Control": "no-cache",
    Connection: "keep-alive",
  });
  res.flushHeaders();
  const subscriber = new RespSubscriber(redis, subscription, {
    onEvent: (event) => res.write(`data: ${eventText(event)}\n\n`),
    onEnd: () => res.end(),
  });
  // Drain whatever body the client sent; the subscription needs none.
  req.resume();
  res.on("close", () => subscriber.close());
}

function eventText(event: PubSubEvent): string {
  switch (event.kind) {
    case "subscribe":
      return `subscribe,${event.channel},${event.count}`;
    case "psubscribe":
      return `psubscribe,${event.pattern},${event.count}`;
    case "message":
      return `message,${event.channel},${event.payload.toString("utf8")}`;
    case "pmessage":
      return `pmessage,${event.pattern},${event.channel},${event.payload.toString("utf8")}`;
  }
}
