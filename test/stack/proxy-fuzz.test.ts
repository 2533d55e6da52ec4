import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { createClient } from "./helpers/clients";
import { usePrivateStack } from "./helpers/private-stack";
import { type RawSocketOutcome, rawExchange } from "./helpers/raw-socket";

// Random requests, malformed ones included, written over raw sockets in random pieces: whatever arrives, the
// proxy answers with a status and, for errors, a JSON {"error"}, and it keeps serving. A small body limit keeps
// oversized bodies cheap.
const MAX_BODY_BYTES = 4096;
const stack = usePrivateStack({ maxBodyBytes: MAX_BODY_BYTES });

/** Replay a failure with PROXY_FUZZ_SEED=<seed> (and PROXY_FUZZ_PATH=<path> from the report). */
const SEED = Number(process.env.PROXY_FUZZ_SEED ?? 20261201);
const RUNS = Number(process.env.PROXY_FUZZ_RUNS ?? 300);
const PATH = process.env.PROXY_FUZZ_PATH;
/** A case gets this long for its answer; the proxy answers in milliseconds. */
const CASE_TIMEOUT_MS = 4000;

type Token = "right" | "wrong";

/** Where the token goes, if anywhere. */
type Auth =
  | { readonly kind: "none" }
  | { readonly kind: "header"; readonly value: string }
  | { readonly kind: "bearer"; readonly token: Token; readonly scheme: string; readonly padding: string }
  | { readonly kind: "query"; readonly token: Token };

type Framing = "content-length" | "content-length-short" | "chunked" | "bad-chunked" | "both" | "none";

interface FuzzCase {
  readonly method: string;
  readonly target: string;
  readonly query: string;
  readonly version: "1.1" | "1.0";
  readonly host: boolean;
  readonly auth: Auth;
  readonly headers: readonly (readonly [string, string])[];
  readonly body: string | Uint8Array;
  readonly framing: Framing;
  /** Where the request's bytes are split, as fractions of its length. */
  readonly cuts: readonly number[];
  readonly pauseMs: number;
  /** Destroys the socket after this fraction of the request's bytes, without waiting for an answer. */
  readonly abortAt: number | null;
}

// ---- Targets -----------------------------------------------------------------------------------------------

const escapes = fc.oneof(
  // Valid: ASCII, a slash, a NUL, a two-byte and a four-byte UTF-8 sequence.
  fc.constantFrom("%41", "%2F", "%2f", "%00", "%C3%A9", "%F0%9F%98%80", "%20", "%25"),
  // Invalid: truncated or non-hex escapes, overlong encodings, a surrogate, stray continuation bytes.
  fc.constantFrom(
    "%",
    "%Z",
    "%ZZ",
    "%E0%A4%A",
    "%C0%AF",
    "%E0%80%AF",
    "%ED%A0%80",
    "%80",
    "%FF",
    "%F8%88%80%80%80",
  ),
  fc
    .tuple(fc.integer({ min: 0, max: 255 }), fc.boolean())
    .map(
      ([byte, upper]) => `%${byte.toString(16).padStart(2, "0")[upper ? "toUpperCase" : "toLowerCase"]()}`,
    ),
);
/** Present one time in `oneIn`, otherwise null. */
function sometimes<T>(arbitrary: fc.Arbitrary<T>, oneIn: number): fc.Arbitrary<T | null> {
  return fc.oneof({ weight: oneIn - 1, arbitrary: fc.constant(null) }, { weight: 1, arbitrary });
}

const pathChar = fc.oneof(
  { weight: 20, arbitrary: fc.constantFrom(..."abcXYZ019-._~".split("")) },
  { weight: 3, arbitrary: fc.constantFrom(..."!$&'()*+,;=:@".split("")) },
  // Characters Node's parser may refuse in a target, or pass through raw.
  { weight: 1, arbitrary: fc.constantFrom(...'{}|"<>^`[]\\'.split(""), "é", "\u0001", " ", "\t") },
);
/** Path text: mostly plain characters, some percent-escapes, valid or not. */
const pathText = (maxLength: number) =>
  fc
    .array(fc.oneof({ weight: 4, arbitrary: pathChar }, { weight: 1, arbitrary: escapes }), { maxLength })
    .map((atoms) => atoms.join(""));
const path = fc.oneof(
  // The command routes, with or without the tolerated trailing slash.
  { weight: 6, arbitrary: fc.constantFrom("/", "/", "/pipeline", "/pipeline", "/multi-exec", "/pipeline/") },
  // Subscription streams, whose name is decoded after the token check.
  {
    weight: 3,
    arbitrary: fc
      .tuple(fc.constantFrom("/subscribe/", "/psubscribe/"), pathText(6))
      .map(([prefix, name]) => `${prefix}${name}`),
  },
  // Anything else: 404s, unless it happens to name a route.
  {
    weight: 2,
    arbitrary: fc
      .array(
        fc.oneof(
          fc.constantFrom("", "pipeline", "multi-exec", "subscribe", "psubscribe", "nope"),
          pathText(6),
        ),
        { minLength: 1, maxLength: 4 },
      )
      .map((segments) => `/${segments.join("/")}`),
  },
);
const target = fc.oneof(
  { weight: 12, arbitrary: path },
  { weight: 1, arbitrary: fc.constantFrom("*", "*]", "*%", "", "pipeline", "//pipeline", "/%") },
  { weight: 1, arbitrary: path.map((p) => `http://127.0.0.1${p}`) },
);
const queryPart = fc.oneof(fc.constantFrom("a", "_token", "EX", "="), pathText(4));
const query = fc.oneof(
  { weight: 3, arbitrary: fc.constant("") },
  {
    weight: 1,
    arbitrary: fc
      .array(fc.tuple(queryPart, queryPart), { minLength: 1, maxLength: 3 })
      .map((pairs) => `?${pairs.map(([key, value]) => `${key}=${value}`).join("&")}`),
  },
);

// ---- Headers -----------------------------------------------------------------------------------------------

const auth: fc.Arbitrary<Auth> = fc.oneof(
  // As the client sends it.
  {
    weight: 10,
    arbitrary: fc.constant({
      kind: "bearer" as const,
      token: "right" as const,
      scheme: "Bearer",
      padding: "",
    }),
  },
  {
    weight: 3,
    arbitrary: fc.record({
      kind: fc.constant("bearer" as const),
      token: fc.constantFrom<Token>("right", "wrong"),
      scheme: fc.constantFrom("Bearer", "bearer", "BEARER"),
      padding: fc.constantFrom("", " ", "\t"),
    }),
  },
  { weight: 1, arbitrary: fc.constant({ kind: "none" as const }) },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant("query" as const),
      token: fc.constantFrom<Token>("right", "wrong"),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant("header" as const),
      value: fc.constantFrom(
        "Bearer undefined",
        "Bearer",
        "Basic dXNlcjpwdw==",
        "",
        `Bearer ${" ".repeat(8000)}x y`,
      ),
    }),
  },
);
const header = (name: string, values: fc.Arbitrary<string>, oneIn: number) =>
  sometimes(
    values.map((value) => [name, value] as const),
    oneIn,
  );
/** Mostly printable ASCII; sometimes control characters, which Node's parser refuses in a header value. */
const headerValue = fc.oneof(
  { weight: 9, arbitrary: fc.string({ unit: "grapheme-ascii", maxLength: 30 }) },
  { weight: 1, arbitrary: fc.string({ unit: "binary-ascii", maxLength: 10 }) },
);
const headers = fc
  .tuple(
    header(
      "Content-Type",
      fc.constantFrom(
        "application/json",
        "application/json; charset=utf-8",
        "text/plain",
        "",
        "multipart/form-data; boundary=x",
        "application/octet-stream",
      ),
      2,
    ),
    header(
      "Upstash-Encoding",
      fc.oneof(fc.constantFrom("base64", "BASE64", "gzip, base64", "plain"), headerValue),
      2,
    ),
    header("Accept", fc.constantFrom("text/event-stream", "application/json", "*/*"), 4),
    header("Expect", fc.constantFrom("100-continue", "something-else"), 12),
    header("Connection", fc.constantFrom("close", "keep-alive", "upgrade"), 2),
    header("Access-Control-Request-Method", fc.constantFrom("POST", "GET"), 10),
    header("upstash-sync-token", fc.constantFrom("", "abc-1"), 4),
    // Large headers, mostly within Node's 16 KiB limit, sometimes over it (431).
    header(
      "X-Filler",
      fc.integer({ min: 1, max: 17_000 }).map((size) => "f".repeat(size)),
      6,
    ),
    fc.array(fc.tuple(fc.stringMatching(/^[A-Za-z][A-Za-z0-9-]{0,15}$/), headerValue), { maxLength: 2 }),
  )
  .map(([contentType, encoding, accept, expectation, connection, preflight, sync, filler, extra]) =>
    [contentType, encoding, accept, expectation, connection, preflight, sync, filler, ...extra].filter(
      (entry): entry is readonly [string, string] => entry !== null,
    ),
  );

// ---- Bodies ------------------------------------------------------------------------------------------------

const SCRIPTS = [
  "return 1",
  "return {1, 'a', {2, redis.status_reply('OK')}}",
  "return redis.call('ping')",
  "#!lua flags=allow-key-locking\nreturn redis.call('get', KEYS[1])",
  "return redis.call('get', 'undeclared')",
  "error('boom')",
];
/** Commands that are harmless on the private Redis, refused ones and unknown ones. */
const commandName = fc.constantFrom(
  "ping",
  "PING",
  "echo",
  "set",
  "get",
  "del",
  "incr",
  "mget",
  "exists",
  "hset",
  "lpush",
  "pexpire",
  "evalsha",
  "script",
  "blpop",
  "multi",
  "subscribe",
  "select",
  "nosuchcommand",
  "",
);
const argument = fc.oneof(
  { weight: 6, arbitrary: fc.string({ maxLength: 12 }) },
  { weight: 2, arbitrary: fc.integer() },
  { weight: 1, arbitrary: fc.double() },
  { weight: 1, arbitrary: fc.boolean() },
  { weight: 1, arbitrary: fc.constant(null) },
  { weight: 1, arbitrary: fc.array(fc.string({ maxLength: 4 }), { maxLength: 2 }) },
  {
    weight: 1,
    arbitrary: fc.dictionary(fc.string({ maxLength: 4 }), fc.string({ maxLength: 4 }), { maxKeys: 2 }),
  },
);
const command = fc.oneof(
  {
    weight: 5,
    arbitrary: fc
      .tuple(commandName, fc.array(argument, { maxLength: 4 }))
      .map(([name, args]) => [name, ...args]),
  },
  {
    weight: 2,
    arbitrary: fc
      .tuple(
        fc.constantFrom("eval", "EVAL_RO"),
        fc.constantFrom(...SCRIPTS),
        fc.array(fc.string({ maxLength: 6 }), { maxLength: 2 }),
      )
      .map(([name, script, keys]) => [name, script, keys.length, ...keys]),
  },
  // Timeouts of 0 would block forever if the proxy forwarded a blocking command; it must refuse them.
  { weight: 1, arbitrary: fc.constantFrom(["blpop", "k", 0], ["xread", "block", 0, "streams", "s", "$"]) },
);
const jsonBody = fc.oneof(
  { weight: 4, arbitrary: command },
  { weight: 3, arbitrary: fc.array(command, { maxLength: 4 }) },
  { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 3 }) },
);
const body: fc.Arbitrary<string | Uint8Array> = fc.oneof(
  { weight: 6, arbitrary: jsonBody.map((value) => JSON.stringify(value) ?? "null") },
  // Invalid JSON: valid text cut short, or anything at all.
  {
    weight: 2,
    arbitrary: fc.tuple(jsonBody, fc.nat()).map(([value, cut]) => {
      const text = JSON.stringify(value) ?? "";
      return text.slice(0, cut % (text.length + 1));
    }),
  },
  { weight: 1, arbitrary: fc.string({ maxLength: 40 }) },
  { weight: 1, arbitrary: fc.uint8Array({ maxLength: 200 }) },
  { weight: 1, arbitrary: fc.constant("") },
  // Over the limit: a command with a long argument, or random bytes.
  {
    weight: 1,
    arbitrary: fc
      .integer({ min: MAX_BODY_BYTES + 1, max: MAX_BODY_BYTES * 3 })
      .map((size) => JSON.stringify(["echo", "x".repeat(size)])),
  },
  { weight: 1, arbitrary: fc.uint8Array({ minLength: MAX_BODY_BYTES + 1, maxLength: MAX_BODY_BYTES * 2 }) },
);

// ---- The case ----------------------------------------------------------------------------------------------

const fuzzCase: fc.Arbitrary<FuzzCase> = fc.record({
  method: fc.oneof(
    { weight: 10, arbitrary: fc.constantFrom("POST", "POST", "POST", "GET", "PUT", "HEAD") },
    {
      weight: 3,
      arbitrary: fc.constantFrom(
        "DELETE",
        "PATCH",
        "OPTIONS",
        "PROPFIND",
        "M-SEARCH",
        "TRACE",
        "CONNECT",
        "QUERY",
      ),
    },
    { weight: 1, arbitrary: fc.constantFrom("post", "FOO", "P0ST", "", "GET\u0000") },
  ),
  target,
  query,
  version: fc.constantFrom<"1.1" | "1.0">("1.1", "1.1", "1.1", "1.1", "1.0"),
  host: fc.oneof({ weight: 15, arbitrary: fc.constant(true) }, { weight: 1, arbitrary: fc.constant(false) }),
  auth,
  headers,
  body,
  framing: fc.oneof(
    { weight: 10, arbitrary: fc.constant<Framing>("content-length") },
    { weight: 4, arbitrary: fc.constant<Framing>("chunked") },
    { weight: 1, arbitrary: fc.constantFrom<Framing>("bad-chunked", "content-length-short", "both", "none") },
  ),
  cuts: fc.array(fc.double({ min: 0, max: 1, noNaN: true }), { maxLength: 4 }),
  pauseMs: fc.constantFrom(0, 0, 1, 2, 5),
  abortAt: sometimes(fc.double({ min: 0, max: 1, noNaN: true }), 8),
});

function tokenValue(token: Token): string {
  return token === "right" ? stack().token : "wrong-token";
}

function requestTarget(fuzz: FuzzCase): string {
  if (fuzz.auth.kind !== "query") return `${fuzz.target}${fuzz.query}`;
  const parameter = `_token=${encodeURIComponent(tokenValue(fuzz.auth.token))}`;
  return `${fuzz.target}${fuzz.query === "" ? "?" : `${fuzz.query}&`}${parameter}`;
}

/** The request's bytes: head, framing headers, then the body framed as the case says. */
function requestBytes(fuzz: FuzzCase): Buffer {
  const lines = [`${fuzz.method} ${requestTarget(fuzz)} HTTP/${fuzz.version}`];
  if (fuzz.host) lines.push(`Host: 127.0.0.1:${stack().proxy.port}`);
  if (fuzz.auth.kind === "bearer") {
    lines.push(`Authorization: ${fuzz.auth.scheme} ${tokenValue(fuzz.auth.token)}${fuzz.auth.padding}`);
  } else if (fuzz.auth.kind === "header") {
    lines.push(`Authorization: ${fuzz.auth.value}`);
  }
  for (const [name, value] of fuzz.headers) lines.push(`${name}: ${value}`);
  const payload = Buffer.from(fuzz.body);
  let framed: Buffer;
  switch (fuzz.framing) {
    case "none":
      framed = Buffer.alloc(0);
      break;
    case "content-length":
      lines.push(`Content-Length: ${payload.length}`);
      framed = payload;
      break;
    case "content-length-short":
      // The extra bytes read as the start of a next request.
      lines.push(`Content-Length: ${Math.floor(payload.length / 2)}`);
      framed = payload;
      break;
    case "both":
      lines.push(`Content-Length: ${payload.length}`, "Transfer-Encoding: chunked");
      framed = chunked(payload, fuzz.cuts);
      break;
    case "chunked":
      lines.push("Transfer-Encoding: chunked");
      framed = chunked(payload, fuzz.cuts);
      break;
    case "bad-chunked":
      lines.push("Transfer-Encoding: chunked");
      framed = Buffer.concat([chunked(payload, fuzz.cuts).subarray(0, -5), Buffer.from("zz\r\n\r\n")]);
      break;
  }
  return Buffer.concat([Buffer.from(`${lines.join("\r\n")}\r\n\r\n`, "latin1"), framed]);
}

function chunked(payload: Buffer, cuts: readonly number[]): Buffer {
  const parts: Buffer[] = [];
  for (const piece of split(payload, cuts)) {
    if (piece.length > 0)
      parts.push(Buffer.from(`${piece.length.toString(16)}\r\n`), piece, Buffer.from("\r\n"));
  }
  parts.push(Buffer.from("0\r\n\r\n"));
  return Buffer.concat(parts);
}

function split(bytes: Buffer, cuts: readonly number[]): Buffer[] {
  const offsets = [...new Set(cuts.map((cut) => Math.floor(cut * bytes.length)))].sort((a, b) => a - b);
  const pieces: Buffer[] = [];
  let start = 0;
  for (const offset of [...offsets, bytes.length]) {
    if (offset > start) pieces.push(bytes.subarray(start, offset));
    start = Math.max(start, offset);
  }
  return pieces.length === 0 ? [bytes] : pieces;
}

function describeOutcome(outcome: RawSocketOutcome): string {
  return outcome.kind === "answered"
    ? `${outcome.status} ${JSON.stringify(outcome.headers)} ${outcome.body.slice(0, 200)}`
    : `${outcome.kind}: ${JSON.stringify(outcome.received.slice(0, 200))}`;
}

/** Every answer has a status; every error answer (and every other answer with a body but a stream) is JSON. */
function expectWellFormed(outcome: RawSocketOutcome, method: string): void {
  expect(outcome.kind, describeOutcome(outcome)).toBe("answered");
  if (outcome.kind !== "answered") return;
  expect(outcome.status).toBeGreaterThanOrEqual(200);
  expect(outcome.status).toBeLessThan(600);
  const stream = (outcome.headers["content-type"] ?? "").startsWith("text/event-stream");
  if (outcome.status === 204 || (stream && outcome.status === 200)) return;
  expect(outcome.headers["content-type"], describeOutcome(outcome)).toBe("application/json");
  if (method === "HEAD" && outcome.body === "") return;
  const parsed: unknown = JSON.parse(outcome.body);
  if (outcome.status >= 400) {
    expect(parsed, describeOutcome(outcome)).toEqual({ error: expect.any(String) });
  }
}

describe("the proxy under random requests", () => {
  it(`answers every request well-formed and keeps serving (seed ${SEED}, ${RUNS} runs)`, async () => {
    const client = createClient(stack());
    const property = fc.asyncProperty(fuzzCase, async (fuzz) => {
      const bytes = requestBytes(fuzz);
      const abort = fuzz.abortAt !== null;
      const sent = abort ? bytes.subarray(0, Math.floor((fuzz.abortAt ?? 0) * bytes.length)) : bytes;
      const outcome = await rawExchange(stack().proxy.port, split(sent, fuzz.cuts), {
        method: fuzz.method,
        pauseMs: fuzz.pauseMs,
        timeoutMs: CASE_TIMEOUT_MS,
        abortAfterWrite: abort,
      });
      if (!abort) expectWellFormed(outcome, fuzz.method);
      expect(await client.ping()).toBe("PONG");
    });
    await fc.assert(property, {
      seed: SEED,
      numRuns: RUNS,
      ...(PATH === undefined ? {} : { path: PATH }),
      // A failure's report (seed, path, counterexample) must arrive before the test's own timeout.
      plugins: [
        fc.timeout(CASE_TIMEOUT_MS + 1000),
        fc.interruptAfterTimeLimit(20_000, { failOnInterrupt: true }),
      ],
    });
    // Cases that opened a stream cut it at its headers; the proxy lets go of every one.
    for (let poll = 0; poll < 100 && stack().proxy.openSubscriptions() > 0; poll++) {
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    expect(stack().proxy.openSubscriptions()).toBe(0);
  });
});
