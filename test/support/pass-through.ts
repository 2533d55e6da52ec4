import {
  Agent,
  createServer,
  type IncomingHttpHeaders,
  type IncomingMessage,
  request,
  type ServerResponse,
} from "node:http";
import type { AddressInfo } from "node:net";
import { RequestCounter, type RequestCounts } from "./request-counter";

/**
 * A fault-injecting HTTP pass-through for tests: put it between a client and the proxy, then make replies
 * vanish, slow down, or fail on demand.
 *
 * Each request takes its fault when it arrives, in this order of precedence: refuse, 5xx, then (after any
 * latency) forward, dropping the reply if a drop is pending.
 */

/** Options of {@link startPassThrough}. */
export interface PassThroughOptions {
  /** Base URL requests are forwarded to, e.g. the proxy's `http://127.0.0.1:PORT`. */
  readonly target: string;
}

/**
 * What reached the pass-through, counted by the shared {@link RequestCounter}: every request,
 * refused and failed ones included, its body bytes and the commands Upstash bills for it.
 */
export type PassThroughStats = RequestCounts;

/** Faults, settable at run time. Counts apply to the next requests to arrive. */
export interface PassThroughFaults {
  /**
   * Forward the next `count` requests and let them complete on the server, then destroy the client's socket
   * instead of answering: `fetch` throws, and a retrying client re-runs a command that already ran.
   */
  dropReplies(count: number): void;
  /** Wait `ms` before forwarding every request (0 turns it off). */
  latency(ms: number): void;
  /**
   * Hold each of the next `count` requests for `ms` before forwarding it, while later requests pass at
   * once: a request that reaches Redis after one sent later (a slow path, a retry on another socket).
   */
  delayNext(count: number, ms: number): void;
  /**
   * As {@link delayNext}, but hold each of the next `count` requests until the returned function is called, not
   * for a time: the test decides when it reaches Redis (after its other calls, however slow the machine). Its
   * caller may give up on it meanwhile; it is forwarded all the same.
   */
  delayHeld(count: number): () => void;
  /**
   * Forward each of the next `count` requests at once, then hold its answer `ms`: a request that ran in Redis
   * while its caller, still waiting for the reply, gave up on it.
   */
  delayRepliesNext(count: number, ms: number): void;
  /** As {@link delayRepliesNext}, but hold each answer until the returned function is called (the test's word). */
  delayRepliesHeld(count: number): () => void;
  /**
   * Cut the client's connection on each of the next `count` requests at once (a retrying client re-sends it),
   * yet forward it `ms` later, its answer going nowhere: a copy the client gave up on that still arrives.
   */
  ghostNext(count: number, ms: number): void;
  /**
   * As {@link ghostNext}, but hold each first copy until the returned function is called, not for a time:
   * the test decides when the copy lands (after its other calls, however slow the machine), so the order is
   * by construction. A copy that arrives once released is forwarded at once; one never released never runs.
   */
  ghostHeld(count: number): () => void;
  /** Destroy the sockets of the next `count` requests without forwarding them (default: every request). */
  refuse(count?: number): void;
  /** Answer the next `count` requests with 503 and a JSON error body, without forwarding them. */
  status5xx(count: number): void;
  /** Clears every fault. */
  reset(): void;
}

/** A running pass-through. */
export interface PassThrough {
  /** Base URL to give the client instead of the target. */
  readonly url: string;
  readonly stats: Readonly<PassThroughStats>;
  readonly faults: PassThroughFaults;
  /**
   * Requests the target has answered so far: they ran in Redis, whatever became of their answer here (held
   * back, dropped). To wait for a request to have run, not just to have arrived.
   */
  ran(): number;
  close(): Promise<void>;
}

type Fault = "refuse" | "status5xx" | "drop" | "none";

interface UpstreamResponse {
  readonly status: number;
  readonly headers: IncomingHttpHeaders;
  readonly body: Buffer;
  /** An event stream (a subscription), passed on live as it comes rather than buffered. */
  readonly stream?: IncomingMessage;
}

/** Headers that describe one hop's connection, never forwarded (RFC 9110 §7.6.1), plus those recomputed. */
const HOP_HEADERS = new Set([
  "connection",
  "keep-alive",
  "proxy-connection",
  "transfer-encoding",
  "upgrade",
  "te",
  "trailer",
  "host",
  "content-length",
]);

/** Starts a pass-through on a free port of 127.0.0.1 forwarding to `options.target`. */
export async function startPassThrough(options: PassThroughOptions): Promise<PassThrough> {
  const target = new URL(options.target);
  const agent = new Agent({ keepAlive: true });
  const counter = new RequestCounter();
  const pending = { refuse: 0, status5xx: 0, drop: 0, latencyMs: 0 };
  const delays: (number | Promise<void>)[] = [];
  const replyDelays: (number | Promise<void>)[] = [];
  /** How long each ghost waits before it is forwarded: a time, or until the test lets it go. */
  const ghosts: (number | Promise<void>)[] = [];
  let ran = 0;

  const takeFault = (): Fault => {
    for (const fault of ["refuse", "status5xx", "drop"] as const) {
      if (pending[fault] > 0) {
        pending[fault] -= 1;
        return fault;
      }
    }
    return "none";
  };

  const serve = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const path = req.url ?? "/";
    counter.request(path);
    const fault = takeFault();
    const delay = delays.shift() ?? 0;
    const replyDelay = replyDelays.shift() ?? 0;
    const body = await readAll(req);
    counter.body(path, body.length > 0 ? body.toString() : undefined);
    if (fault === "refuse") {
      counter.answered(path, false);
      req.socket.destroy();
      return;
    }
    if (fault === "status5xx") {
      counter.answered(path, false);
      sendJson(res, 503, { error: "pass-through: injected 503" });
      return;
    }
    const ghost = ghosts.shift();
    if (ghost !== undefined) {
      counter.answered(path, false);
      req.socket.destroy();
      await (typeof ghost === "number" ? new Promise((resolve) => setTimeout(resolve, ghost)) : ghost);
      await forward(req, body, target, agent).then(
        () => {
          ran += 1; // the copy ran in Redis, its answer going nowhere
        },
        () => undefined,
      );
      return;
    }
    if (typeof delay !== "number") await delay;
    const wait = pending.latencyMs + (typeof delay === "number" ? delay : 0);
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
    let upstream: UpstreamResponse;
    try {
      upstream = await forward(req, body, target, agent);
      ran += 1;
    } catch (error) {
      counter.answered(path, false);
      sendJson(res, 502, { error: `pass-through: upstream request failed: ${(error as Error).message}` });
      return;
    }
    if (typeof replyDelay !== "number") await replyDelay;
    else if (replyDelay > 0) await new Promise((resolve) => setTimeout(resolve, replyDelay));
    counter.answered(path, fault !== "drop" && upstream.status < 400);
    if (fault === "drop") {
      upstream.stream?.destroy();
      req.socket.destroy();
      return;
    }
    if (upstream.stream) {
      const stream = upstream.stream;
      res.writeHead(upstream.status, withoutHopHeaders(upstream.headers));
      res.flushHeaders();
      stream.pipe(res);
      res.on("close", () => stream.destroy()); // the client went away: so does the subscription
      // The target dropped the subscription (a restart, a killed connection): so does the client's, as it
      // would over Upstash, rather than stay open and hear nothing.
      stream.on("close", () => {
        if (!stream.complete) res.destroy();
      });
      return;
    }
    res.writeHead(upstream.status, {
      ...withoutHopHeaders(upstream.headers),
      "content-length": upstream.body.length,
    });
    res.end(upstream.body);
  };

  const server = createServer((req, res) => {
    serve(req, res).catch(() => req.socket.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${port}`,
    stats: counter.counts,
    ran: () => ran,
    faults: {
      dropReplies: (count) => {
        pending.drop += count;
      },
      latency: (ms) => {
        pending.latencyMs = ms;
      },
      delayNext: (count, ms) => {
        for (let index = 0; index < count; index++) delays.push(ms);
      },
      delayHeld: (count) => holdEach(delays, count),
      delayRepliesNext: (count, ms) => {
        for (let index = 0; index < count; index++) replyDelays.push(ms);
      },
      delayRepliesHeld: (count) => holdEach(replyDelays, count),
      ghostNext: (count, ms) => {
        for (let index = 0; index < count; index++) ghosts.push(ms);
      },
      ghostHeld: (count) => holdEach(ghosts, count),
      refuse: (count = Number.POSITIVE_INFINITY) => {
        pending.refuse += count;
      },
      status5xx: (count) => {
        pending.status5xx += count;
      },
      reset: () => {
        Object.assign(pending, { refuse: 0, status5xx: 0, drop: 0, latencyMs: 0 });
        delays.length = 0;
        replyDelays.length = 0;
        ghosts.length = 0;
      },
    },
    close: async () => {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeAllConnections();
      agent.destroy();
      await closed;
    },
  };
}

/** The whole body of a request. */
export function readAll(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => resolve(Buffer.concat(chunks)));
    req.on("error", reject);
  });
}

/**
 * Sends the request to the target and buffers the whole answer (an event stream's is passed on live). A kept-alive socket the target closed while
 * idle fails with ECONNRESET before the request reached it; that case alone is retried once, as Node's docs
 * advise (`request.reusedSocket`).
 */
async function forward(
  req: IncomingMessage,
  body: Buffer,
  target: URL,
  agent: Agent,
): Promise<UpstreamResponse> {
  try {
    return await forwardOnce(req, body, target, agent);
  } catch (error) {
    if (
      (error as { reusedSocket?: boolean }).reusedSocket &&
      (error as NodeJS.ErrnoException).code === "ECONNRESET"
    ) {
      return forwardOnce(req, body, target, agent);
    }
    throw error;
  }
}

function forwardOnce(
  req: IncomingMessage,
  body: Buffer,
  target: URL,
  agent: Agent,
): Promise<UpstreamResponse> {
  return new Promise((resolve, reject) => {
    const upstream = request(
      {
        host: target.hostname,
        port: target.port,
        method: req.method,
        path: `${target.pathname.replace(/\/$/, "")}${req.url ?? "/"}`,
        headers: { ...withoutHopHeaders(req.headers), host: target.host, "content-length": body.length },
        agent,
      },
      (response) => {
        if ((response.headers["content-type"] ?? "").startsWith("text/event-stream")) {
          resolve({
            status: response.statusCode ?? 502,
            headers: response.headers,
            body: Buffer.alloc(0),
            stream: response,
          });
          return;
        }
        readAll(response).then(
          (responseBody) =>
            resolve({ status: response.statusCode ?? 502, headers: response.headers, body: responseBody }),
          reject,
        );
      },
    );
    upstream.on("error", (error) => reject(Object.assign(error, { reusedSocket: upstream.reusedSocket })));
    upstream.end(body);
  });
}

function withoutHopHeaders(headers: IncomingHttpHeaders): IncomingHttpHeaders {
  return Object.fromEntries(Object.entries(headers).filter(([name]) => !HOP_HEADERS.has(name.toLowerCase())));
}

function sendJson(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(text) });
  res.end(text);
}

/** Queues `count` waits on one gate for the next requests; returns what opens it (the test's word). */
function holdEach(queue: (number | Promise<void>)[], count: number): () => void {
  let open = (): void => undefined;
  const opened = new Promise<void>((resolve) => {
    open = resolve;
  });
  for (let index = 0; index < count; index++) queue.push(opened);
  return open;
}
