import { backgroundTimer } from "../clock";
import { channelHub } from "./channel-hub";
import type { EventFeed, StopListening } from "./feed-types";

/** The part of `@upstash/redis`'s subscriber the feed uses (an SSE stream per subscription). */
interface UpstashSubscriber {
  on(type: "subscribe", listener: (count: number) => void): void;
  on(type: "message", listener: (event: { channel: string; message: unknown }) => void): void;
  on(type: "error", listener: (error: Error) => void): void;
  unsubscribe(channels?: string[]): Promise<void>;
}

interface UpstashSubscribing {
  subscribe(channels: string | string[]): UpstashSubscriber;
}

// How long to wait for the server to confirm a subscription before polling without it.
const CONFIRM_WITHIN_MS = 2_000;

/**
 * Lock events over `@upstash/redis`'s `subscribe()`: one server-sent-events stream per channel in
 * use (a SUBSCRIBE, billed as one command), shared by the process's waiters on that lock and
 * closed when the last of them stops waiting. Closing sends nothing: the client aborts the stream.
 */
export function upstashFeed(client: object): EventFeed | undefined {
  if (typeof (client as Partial<UpstashSubscribing>).subscribe !== "function") return undefined;
  const subscribing = client as UpstashSubscribing;
  return channelHub(
    (channel, listener, signal) =>
      new Promise<StopListening>((resolve, reject) => {
        const subscriber = subscribing.subscribe(channel);
        let active = false;
        const stop = () => {
          clearTimeout(timer);
          signal.removeEventListener("abort", onAbort);
          subscriber.unsubscribe().catch(() => {});
        };
        const fail = (error: Error) => {
          stop();
          if (active) listener.ended();
          else reject(error);
        };
        const onAbort = () => fail(new Error("the subscription is no longer wanted"));
        const timer = backgroundTimer(CONFIRM_WITHIN_MS, () =>
          fail(new Error(`no subscription confirmed within ${CONFIRM_WITHIN_MS} ms`)),
        );
        signal.addEventListener("abort", onAbort, { once: true });
        subscriber.on("subscribe", () => {
          clearTimeout(timer);
          signal.removeEventListener("abort", onAbort);
          active = true;
          resolve(stop);
        });
        subscriber.on("message", (event) => {
          if (event.channel === channel) listener.message(event.message);
        });
        // A broken stream: waiters go back to polling; their own timers still bound the wait.
        subscriber.on("error", fail);
      }),
  );
}
