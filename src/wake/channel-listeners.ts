import { type LockEvent, lockEventOf } from "./release-channel";

/**
 * Listeners per channel, for clients that share one subscriber connection: knows when a channel
 * gains its first listener (subscribe) and loses its last (unsubscribe).
 */
export class ChannelListeners {
  readonly #byChannel = new Map<string, Set<(event: LockEvent) => void>>();

  /** Adds a listener; true when it is the channel's first. */
  add(channel: string, listener: (event: LockEvent) => void): boolean {
    const listeners = this.#byChannel.get(channel);
    if (listeners) {
      listeners.add(listener);
      return false;
    }
    this.#byChannel.set(channel, new Set([listener]));
    return true;
  }

  /** Removes a listener; true when the channel has none left. */
  remove(channel: string, listener: (event: LockEvent) => void): boolean {
    const listeners = this.#byChannel.get(channel);
    if (!listeners?.delete(listener)) return false;
    if (listeners.size > 0) return false;
    this.#byChannel.delete(channel);
    return true;
  }

  /** Calls every listener of `channel` with the event a message carries. */
  notify(channel: string, message: unknown): void {
    const event = lockEventOf(message);
    for (const listener of this.#byChannel.get(channel) ?? []) listener(event);
  }

  /** How many channels have listeners. */
  get channels(): number {
    return this.#byChannel.size;
  }
}
