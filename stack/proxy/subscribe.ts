import type { IncomingMessage, ServerResponse } from "node:http";
import type { RespConnectionOptions } from "../resp/connection";
import { type PubSubEvent, RespSubscriber, type Subscription } from "../resp/subscriber";
import { CORS_RESPONSE_HEADERS } from "./cors";
import { HttpError } from "./http-error";

/** The path prefixes of Upstash's server-sent-events endpoints, by what they subscribe to. */
const PREFIXES = [
  { prefix: "/subscribe/", kind: "channel" },
  { prefix: "/psubscribe/", kind: "pattern" },
] as const;

/** A subscription path, its name still percent-encoded as it arrived. */
export interface SubscriptionPath {
  readonly kind: Subscription["kind"];
  readonly encodedName: string;
}

/**
 * Whether a path is `/subscribe/<channel>` or `/psubscribe/<pattern>` (undefined for any other path, an
 * empty name included). Nothing is decoded yet, so this cannot fail: the name is decoded by
 * {@link decodeSubscription} only once the token has been checked.
 */
export function subscriptionPath(pathname: string): SubscriptionPath | undefined {
  for (const { prefix, kind } of PREFIXES) {
    if (pathname.startsWith(prefix)) {
      const encodedName = pathname.slice(prefix.length);
      return encodedName === "" ? undefined : { kind, encodedName };
    }
  }
  return undefined;
}

/**
 * The subscription a path asks for, its name percent-decoded as UTF-8.
 *
 * @throws HttpError 400 for a malformed escape (`%ZZ`, a truncated `%E0%A4%A`) or bytes that are not UTF-8
 *   (an overlong `%C0%AF`).
 */
export function decodeSubscription(path: SubscriptionPath): Subscription {
  let name: string;
  try {
    name = decodeURIComponent(path.encodedName);
  } catch {
    throw new HttpError(
      400,
      `ERR malformed percent-encoding in the path: ${JSON.stringify(path.encodedName)} is not percent-encoded UTF-8`,
    );
  }
  return { kind: path.kind, names: [name] };
}

/** One open event stream: its response and the Redis connection that feeds it. */
interface OpenStream {
  readonly res: ServerResponse;
  readonly subscriber: RespSubscriber;
}

/**
 * The server-sent-events streams of one proxy. {@link open} starts one; the proxy's handle exposes
 * {@link count}, {@link endAll} and {@link dropAll} so that tests can watch streams and end or break them.
 */
export class SubscriptionStreams {
  readonly #open = new Set<OpenStream>();

  /** Streams open right now. */
  get count(): number {
    return this.#open.size;
  }

  /**
   * `POST /subscribe/<channel>` and `POST /psubscribe/<pattern>`: a server-sent-events stream, in the form
   * `@upstash/redis`'s `subscribe()` and `psubscribe()` read: `data: subscribe,<channel>,<count>` (or
   * `psubscribe,<pattern>,<count>`) once Redis confirms, then `data: message,<channel>,<payload>` (or
   * `pmessage,<pattern>,<channel>,<payload>`) per message. Each stream has its own Redis connection in
   * subscriber mode, closed when the client goes away; the stream ends if Redis goes away.
   */
  open(
    req: IncomingMessage,
    res: ServerResponse,
    subscription: Subscription,
    redis: RespConnectionOptions,
    syncToken: string,
  ): void {
    res.writeHead(200, {
      ...CORS_RESPONSE_HEADERS,
      // Upstash returns one on every response; the client keeps the last it saw, an empty one if absent.
      "upstash-sync-token": syncToken,
      "Content-Type": "text/event-stream",
      "Cache-Control": "no-cache",
      Connection: "keep-alive",
    });
    res.flushHeaders();
    const subscriber = new RespSubscriber(redis, subscription, {
      onEvent: (event) => res.write(`data: ${eventText(event)}\n\n`),
      onEnd: () => {
        this.#open.delete(stream);
        res.end();
      },
    });
    const stream: OpenStream = { res, subscriber };
    this.#open.add(stream);
    // Drain whatever body the client sent; the subscription needs none.
    req.resume();
    res.on("close", () => {
      this.#open.delete(stream);
      subscriber.close();
    });
  }

  /**
   * Ends every open stream quietly, as a server that finishes a response does: the Redis connection is
   * closed, then the response ends normally (the last chunk, no error), so the client's reader sees the end
   * of the body.
   *
   * @returns how many streams were ended.
   */
  endAll(): number {
    return this.#each(({ res, subscriber }) => {
      subscriber.close();
      res.end();
    });
  }

  /**
   * Breaks every open stream, as a network failure does: each stream's socket is destroyed mid-response
   * (the client's reader fails), and its Redis connection is closed with it.
   *
   * @returns how many streams were dropped.
   */
  dropAll(): number {
    return this.#each(({ res, subscriber }) => {
      res.destroy();
      subscriber.close();
    });
  }

  #each(action: (stream: OpenStream) => void): number {
    const streams = [...this.#open];
    this.#open.clear();
    for (const stream of streams) action(stream);
    return streams.length;
  }
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
