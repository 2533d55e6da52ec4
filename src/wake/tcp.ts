import type { ChannelListener, SubscribeChannel } from "./feed";

/** The pub/sub parts of an ioredis or node-redis client, as a duplicate of it uses them. */
export interface PubSubClient {
  /** Options for the duplicate: ioredis's (a `Redis`; a Cluster gets none), or node-redis's (`RESP`). */
  duplicate(options?: object): PubSubClient;
  /** The client's options, whose handshake the duplicate repeats (ioredis's and node-redis's names). */
  readonly options?: Readonly<Record<string, unknown>>;
  /** ioredis: whether this is a Cluster, whose `duplicate` takes startup nodes first. */
  readonly isCluster?: boolean;
  /** An ioredis Cluster's connections to its nodes (`"master"`: the primaries). */
  nodes?(role: "master"): PubSubClient[];
  /** A node-redis cluster's primaries, each with its client once connected. */
  readonly masters?: readonly { readonly client?: PubSubClient | undefined }[];
  subscribe(channel: string, listener?: (message: string, channel: string) => void): Promise<unknown>;
  unsubscribe(channel: string): Promise<unknown>;
  on(event: string, listener: (...args: never[]) => void): unknown;
  once?(event: string, listener: () => void): unknown;
  /** ioredis: "wait" until a `lazyConnect` client is asked to connect, "connecting" ... "ready". */
  readonly status?: string;
  /** node-redis: whether the connection is open and takes commands. */
  readonly isReady?: boolean;
  connect?(): Promise<unknown>;
  disconnect?(): unknown;
  destroy?(): unknown;
}

/** Idle channels kept subscribed on an open connection: joined again for free, and no UNSUBSCRIBE each. */
const IDLE_KEPT = 32;

/** A channel on the connection: its listeners, and its SUBSCRIBE, which joiners share while in flight. */
interface Channel {
  readonly listeners: Set<ChannelListener>;
  readonly subscribed: Promise<unknown>;
  active: boolean; // Redis confirmed the SUBSCRIBE: only then may it be unsubscribed
  leaving: Promise<void> | undefined; // its UNSUBSCRIBE, until answered: node-redis forgets listeners then
}

interface Link {
  readonly client: PubSubClient;
  readonly channels: Map<string, Channel>;
  readonly connected: Promise<unknown>;
  /** Rejects once the connection is closed: a reply still awaited (ioredis may never send it) is not. */
  readonly closed: Promise<never>;
  shut(): void;
  users: number; // waits and subscriptions using it: closed when none is left
  dead: boolean; // the connection dropped: nothing is sent on it again, nor is it reused
}

const CLOSED = "the subscriber connection closed";

/**
 * One duplicated connection in subscriber mode, opened on first use, closed once unused (even mid-connect).
 * A channel stays subscribed while the connection is open, idle or not (closing it ends them all for free),
 * so a wait pays one SUBSCRIBE, and none to join again; past IDLE_KEPT idle channels, a new one unsubscribes
 * the oldest idle first (commands go in order on the connection, so a later SUBSCRIBE of it is never undone).
 * The duplicate speaks RESP2 with no ready check: no HELLO, no INFO. A dropped connection is closed for good
 * and its listeners hear "ended" (messages meanwhile are lost): the next wait opens a fresh one.
 */
export function tcpSubscriber(source: PubSubClient, ioredis: boolean): SubscribeChannel {
  let current: Link | undefined;

  const close = (link: Link) => {
    link.dead = true;
    link.shut();
    if (current === link) current = undefined;
    // An ioredis connection that closed has ended (it never reconnects): disconnecting it again would arm a
    // 2 s timer, waiting for a "close" that already came, which keeps the process alive.
    if (ioredis && link.client.status === "end") return;
    try {
      // ioredis: disconnect(); node-redis 5 and later: destroy(); 4: disconnect().
      const closing = link.client.destroy ? link.client.destroy() : link.client.disconnect?.();
      if (closing instanceof Promise) closing.catch(() => {});
    } catch {
      // Already closed.
    }
  };
  const drop = (link: Link) => {
    if (link.dead) return;
    close(link);
    const active = [...link.channels.values()].filter((entry) => entry.active);
    link.channels.clear();
    for (const entry of active) for (const listener of entry.listeners) listener.ended();
  };
  const open = (): Link => {
    // A dropped connection is replaced by a fresh one at the next wait: ioredis must not reconnect this one.
    // A cluster's own subscriber would resubscribe in silence (neither client says so), and releases
    // announced in the gap would be lost unheard: a primary's connection serves (a PUBLISH reaches every node).
    const base = primaryOf(source, ioredis);
    // No HELLO, no ready check (its INFO), no CLIENT SETINFO: billed commands. SUBSCRIBE is served while Redis
    // loads its data.
    const client = !ioredis
      ? nodeRedisDuplicate(base)
      : base.isCluster
        ? base.duplicate()
        : base.duplicate({
            retryStrategy: () => null,
            enableReadyCheck: false,
            protocol: 2,
            disableClientInfo: true,
            disconnectTimeout: 0, // closed unused: a silent peer's "close" is not worth 2 s of a live process
          });
    let shut!: () => void;
    const closed = new Promise<never>((_, reject) => {
      shut = () => reject(new Error(CLOSED));
    });
    const connected = Promise.race([ioredis ? ioredisReady(client) : client.connect?.(), closed]);
    for (const settling of [closed, connected]) settling.catch(() => {});
    const link: Link = { client, channels: new Map(), connected, closed, shut, users: 0, dead: false };
    client.on("error", () => drop(link)); // unlistened, an error throws; a drop may lose messages
    client.on(ioredis ? "close" : "end", () => drop(link));
    if (ioredis) client.on("message", (channel: string, message: string) => deliver(link, channel, message));
    return link;
  };
  const deliver = (link: Link, channel: string, message: string) => {
    for (const listener of link.channels.get(channel)?.listeners ?? []) listener.message(message);
  };

  const forget = (link: Link, channel: string, entry: Channel) => {
    if (link.channels.get(channel) === entry) link.channels.delete(channel);
  };
  const join = (link: Link, channel: string): Channel => {
    // node-redis hands a channel's messages to the listener its SUBSCRIBE names; ioredis emits "message".
    const sent = ioredis
      ? link.client.subscribe(channel)
      : link.client.subscribe(channel, (message) => deliver(link, channel, message));
    const subscribed = Promise.race([sent, link.closed]);
    const entry: Channel = { listeners: new Set(), subscribed, active: false, leaving: undefined };
    link.channels.set(channel, entry);
    subscribed.then(
      () => (entry.active = true),
      () => forget(link, channel, entry),
    );
    return entry;
  };
  const idleOf = (link: Link) =>
    [...link.channels].filter(([, entry]) => entry.active && !entry.leaving && entry.listeners.size === 0);
  const unsubscribeOldestIdle = (link: Link) => {
    const idle = idleOf(link);
    if (idle.length < IDLE_KEPT) return;
    const [channel, entry] = idle[0] as [string, Channel];
    const done = () => forget(link, channel, entry);
    entry.leaving = Promise.race([link.client.unsubscribe(channel), link.closed]).then(done, done);
  };

  const subscribe: SubscribeChannel = async (channel, listener, unwanted) => {
    const link = current ?? open();
    current = link;
    link.users += 1;
    let using = true;
    const letGo = () => {
      if (!using) return;
      using = false;
      link.users -= 1;
      if (link.users === 0) close(link);
    };
    unwanted.addEventListener("abort", letGo, { once: true });
    let entry: Channel | undefined;
    const stop = () => {
      entry?.listeners.delete(listener);
      letGo();
    };
    try {
      await link.connected;
      let found = link.channels.get(channel);
      for (; found?.leaving; found = link.channels.get(channel)) await found.leaving; // then SUBSCRIBE anew
      if (link.dead || !using) throw new Error(CLOSED);
      if (!found) unsubscribeOldestIdle(link);
      entry = found ?? join(link, channel);
      entry.listeners.add(listener);
      await entry.subscribed;
      if (link.dead || !using) throw new Error(CLOSED);
    } catch (error) {
      stop();
      throw error;
    } finally {
      unwanted.removeEventListener("abort", letGo);
    }
    return stop;
  };
  // What subscribing `channel` sends now: nothing to join it; else a SUBSCRIBE, after a new connection's
  // handshake or an UNSUBSCRIBE of the oldest idle channel.
  const cost = (channel: string | undefined) => {
    const link = current?.dead ? undefined : current;
    const entry = channel === undefined ? undefined : link?.channels.get(channel);
    if (entry && !entry.leaving) return 0;
    if (!link) return 1 + handshakeCommands(primaryOf(source, ioredis).options);
    return idleOf(link).length >= IDLE_KEPT ? 2 : 1;
  };
  return Object.assign(subscribe, { cost });
}

/**
 * The client a subscriber connection duplicates: a cluster's first primary whose connection is ready (a dead
 * one stays listed until the slots are refreshed, and never-used ones are not connected), else its first.
 */
function primaryOf(source: PubSubClient, ioredis: boolean): PubSubClient {
  const primaries = ioredis
    ? (source.nodes?.("master") ?? [])
    : (source.masters ?? []).flatMap((node) => (node.client ? [node.client] : []));
  const ready = primaries.find((primary) => (ioredis ? primary.status === "ready" : primary.isReady));
  return ready ?? primaries[0] ?? source;
}

/**
 * node-redis's duplicate in RESP2, without what only RESP3 serves (a client that refuses: as it is), and
 * without the client's `pingInterval`: a PING every interval would be billed and counted by no wait.
 */
function nodeRedisDuplicate(base: PubSubClient): PubSubClient {
  // Its socket timeout is an idle one: a subscription, idle between announcements, would end after each.
  const socket = (base as { options?: { socket?: object } }).options?.socket;
  try {
    return base.duplicate({
      ...(socket && { socket: { ...socket, socketTimeout: undefined } }),
      RESP: 2,
      maintNotifications: "disabled",
      clientSideCache: undefined,
      emitInvalidate: false,
      disableClientInfo: true,
      pingInterval: 0,
    });
  } catch {
    return base.duplicate();
  }
}

/**
 * The commands a RESP2 connection of a client with these options sends before its first (AUTH, SELECT,
 * CLIENT SETNAME, READONLY), under ioredis's names or node-redis's.
 */
function handshakeCommands(options: Readonly<Record<string, unknown>> | undefined): number {
  if (!options) return 0;
  const { password, db, database, connectionName, name, readOnly, readonly } = options;
  return [password, db || database, connectionName || name, readOnly || readonly].filter(Boolean).length;
}

/**
 * Settles once an ioredis duplicate takes commands: until then one that inherited `enableOfflineQueue: false`
 * (as fast failure asks) refuses SUBSCRIBE, and one that inherited `lazyConnect` does not connect by itself.
 */
function ioredisReady(client: PubSubClient): Promise<unknown> | undefined {
  const { status, once } = client;
  if (status === "wait") return client.connect?.();
  if (!once || !["connecting", "connect", "reconnecting"].includes(status ?? "")) return undefined;
  return new Promise((resolve) => once.call(client, "ready", () => resolve(undefined)));
}
