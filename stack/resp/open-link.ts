import { connect } from "node:net";
import type { Command } from "./command";
import { RespConnectionError } from "./errors";
import { RespError } from "./reply";
import { SocketLink } from "./socket-link";

/** Where and how to open a link to Redis. */
export interface LinkOptions {
  readonly host: string;
  readonly port: number;
  /** Time allowed for the TCP connect plus the handshake, in milliseconds. */
  readonly connectTimeoutMs: number;
  /** Commands sent first on every new connection (AUTH, SELECT); any error reply fails the connect. */
  readonly handshake: readonly Command[];
}

/**
 * Opens a socket to Redis and runs the handshake, all within `connectTimeoutMs`.
 *
 * @throws RespConnectionError when the connection is refused, times out, or the handshake is rejected.
 */
export async function openLink(options: LinkOptions): Promise<SocketLink> {
  const label = `${options.host}:${options.port}`;
  const link = new SocketLink(
    connect({ host: options.host, port: options.port, noDelay: true, keepAlive: true }),
    label,
  );
  const timer = setTimeout(() => {
    link.destroy(
      new RespConnectionError(
        `Timed out connecting to Redis at ${label} after ${options.connectTimeoutMs} ms`,
      ),
    );
  }, options.connectTimeoutMs);
  try {
    await link.ready;
    await runHandshake(link, options.handshake, label);
    return link;
  } catch (error) {
    link.destroy(error as Error);
    throw error;
  } finally {
    clearTimeout(timer);
  }
}

async function runHandshake(link: SocketLink, handshake: readonly Command[], label: string): Promise<void> {
  const replies = await link.send(handshake);
  const rejected = replies.find((reply) => reply instanceof RespError);
  if (rejected instanceof RespError) {
    throw new RespConnectionError(`Redis at ${label} rejected the connection handshake: ${rejected.message}`);
  }
}
