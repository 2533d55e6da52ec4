import { connect, type Socket } from "node:net";
import type { Command } from "./command";
import type { RespConnectionOptions } from "./connection";
import { encodeCommands } from "./encoder";
import { RespParser } from "./parser";
import { RespError, RespInteger, type RespReply } from "./reply";

/** What a subscriber listens to: channels by name (SUBSCRIBE), or every channel matching a pattern (PSUBSCRIBE). */
export interface Subscription {
  readonly kind: "channel" | "pattern";
  /** Channel names or glob-style patterns. */
  readonly names: readonly string[];
}

/** A pub/sub event, as Redis pushes it to a subscribed connection; `count` is the connection's subscriptions. */
export type PubSubEvent =
  | { readonly kind: "subscribe"; readonly channel: string; readonly count: number }
  | { readonly kind: "psubscribe"; readonly pattern: string; readonly count: number }
  | { readonly kind: "message"; readonly channel: string; readonly payload: Buffer }
  | {
      readonly kind: "pmessage";
      readonly pattern: string;
      readonly channel: string;
      readonly payload: Buffer;
    };

/** What a subscriber reports. */
export interface SubscriberListeners {
  /** Every subscribe confirmation and message, in order. */
  onEvent(event: PubSubEvent): void;
  /** Once, when the connection ends for any reason other than `close()`; `error` says why. */
  onEnd(error: Error): void;
}

/**
 * One connection to Redis in subscriber mode, for one SSE stream. Unlike {@link RespConnection}, replies
 * here are pushed by Redis rather than requested, so they are dispatched as events, not matched to calls.
 */
export class RespSubscriber {
  readonly #socket: Socket;
  readonly #listeners: SubscriberListeners;
  readonly #parser = new RespParser();
  /** Replies still owed to the handshake (AUTH, SELECT) before pub/sub events start. */
  #handshakeReplies: number;
  #closed = false;

  /** Connects, runs the handshake and subscribes; events arrive through `listeners`. */
  constructor(options: RespConnectionOptions, subscription: Subscription, listeners: SubscriberListeners) {
    const handshake: readonly Command[] = options.handshake ?? [];
    this.#handshakeReplies = handshake.length;
    this.#listeners = listeners;
    this.#socket = connect({ host: options.host, port: options.port, noDelay: true });
    this.#socket.setTimeout(options.connectTimeoutMs ?? 5000, () =>
      this.#end(new Error("Redis connect timed out")),
    );
    this.#socket.once("connect", () => {
      this.#socket.setTimeout(0);
      const subscribe = subscription.kind === "pattern" ? "PSUBSCRIBE" : "SUBSCRIBE";
      this.#socket.write(encodeCommands([...handshake, [subscribe, ...subscription.names]]));
    });
    this.#socket.on("data", (chunk) => {
      try {
        for (const reply of this.#parser.feed(chunk)) this.#dispatch(reply);
      } catch (error) {
        this.#end(error as Error);
      }
    });
    this.#socket.on("error", (error) => this.#end(error));
    this.#socket.on("close", () => this.#end(new Error("Redis closed the connection")));
  }

  /** Ends the subscription and the connection; no listener is called afterwards. */
  close(): void {
    this.#closed = true;
    this.#socket.destroy();
  }

  #dispatch(reply: RespReply): void {
    if (this.#handshakeReplies > 0) {
      this.#handshakeReplies -= 1;
      if (reply instanceof RespError) this.#end(new Error(`Redis rejected the handshake: ${reply.message}`));
      return;
    }
    if (reply instanceof RespError) {
      this.#end(new Error(reply.message));
      return;
    }
    const event = toEvent(reply);
    if (event && !this.#closed) this.#listeners.onEvent(event);
  }

  #end(error: Error): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#socket.destroy();
    this.#listeners.onEnd(error);
  }
}

/**
 * Reads a push: `[subscribe|psubscribe, channel|pattern, count]`, `[message, channel, payload]` or
 * `[pmessage, pattern, channel, payload]`.
 */
function toEvent(reply: RespReply): PubSubEvent | undefined {
  if (!Array.isArray(reply)) return undefined;
  const [kind, subject, detail, pmessagePayload] = reply;
  if (!Buffer.isBuffer(kind) || !Buffer.isBuffer(subject)) return undefined;
  const name = kind.toString();
  if (name === "subscribe" && detail instanceof RespInteger) {
    return { kind: name, channel: subject.toString(), count: detail.toNumber() };
  }
  if (name === "psubscribe" && detail instanceof RespInteger) {
    return { kind: name, pattern: subject.toString(), count: detail.toNumber() };
  }
  if (name === "message" && Buffer.isBuffer(detail)) {
    return { kind: name, channel: subject.toString(), payload: detail };
  }
  if (name === "pmessage" && Buffer.isBuffer(detail) && Buffer.isBuffer(pmessagePayload)) {
    return { kind: name, pattern: subject.toString(), channel: detail.toString(), payload: pmessagePayload };
  }
  return undefined;
}
