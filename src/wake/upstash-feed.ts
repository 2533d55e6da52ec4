import { backgroundTimer } from "../timers";
import { lockEventOf } from "./release-channel";
import type { ReleaseFeed, StopListening } from "./release-feed";

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
 * Release feed over `@upstash/redis`'s `subscribe()`: one server-sent-events stream per waiting
 * lock, opened after a failed attempt and closed when the wait ends.
 */
export function upstashFeed(client: object): ReleaseFeed | undefined {
  if (typeof (client as Partial<UpstashSubscribing>).subscribe !== "function") return undefined;
  const subscribing = client as UpstashSubscribing;
  return {
    listen(channel, onEvent, signal) {
      return new Promise<StopListening | undefined>((resolve) => {
        let subscriber: UpstashSubscriber;
        try {
          subscriber = subscribing.subscribe(channel);
        } catch {
          resolve(undefined);
          return;
        }
        const stop = () => {
          clearTimeout(timer);
          signal.removeEventListener("abort", giveUp);
          subscriber.unsubscribe().catch(() => {});
        };
        const giveUp = () => {
          stop();
          resolve(undefined);
        };
        const timer = backgroundTimer(CONFIRM_WITHIN_MS, giveUp);
        signal.addEventListener("abort", giveUp, { once: true });
        subscriber.on("subscribe", () => {
          clearTimeout(timer);
          signal.removeEventListener("abort", giveUp);
          resolve(stop);
        });
        subscriber.on("message", (event) => {
          if (event.channel === channel) onEvent(lockEventOf(event.message));
        });
        // The stream failed: keep polling; the waiter's own timers still bound the wait.
        subscriber.on("error", giveUp);
      });
    },
  };
}
