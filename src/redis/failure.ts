// Failures told safely: client errors quote the whole command ("command was: [...]"), script and token too.

/**
 * Errors Redis (or the REST endpoint) gives for a request that cannot succeed however often it is sent. A
 * redirection reaches the lock only through a client that cannot follow it (not a cluster client: cluster
 * clients follow it, and one that gave up says so first, "Too many Cluster redirections").
 */
const REFUSAL =
  /^(WRONGPASS|NOAUTH|NOPERM|WRONGTYPE|Unauthorized|Forbidden|MOVED|ASK|CROSSSLOT)\b|invalid token|unknown command|wrong number of arguments|syntax error|Error running script|@user_script|^ERR .*script/i;

/** Errors of a moment (a failover, memory, loading, a busy or resharding server), also when a script quotes them. */
const PASSING = /(^|-)(READONLY|OOM|MASTERDOWN|LOADING|BUSY|TRYAGAIN|CLUSTERDOWN|NOREPLICAS|MISCONF)\b/i;

/** An error reply's code ("ERR", "READONLY", ...): Redis was reached and answered. Not a socket's (ECONNRESET). */
const REPLY_ERROR = /^(ERR|EXECABORT|(?!E)[A-Z][A-Z_]+)\s/;

/** A REST endpoint's error reply that says it could not reach Redis ("ERR Redis is unreachable: ..."). */
const UNREACHED = /unreachable|ECONN[A-Z]+|ETIMEDOUT|EHOSTUNREACH/;

/** Whether `error` quotes an error reply of Redis's (or the REST endpoint's, unless it could not reach Redis). */
export function isErrorReply(error: unknown): boolean {
  const said = summarize(error);
  return REPLY_ERROR.test(said) && !UNREACHED.test(said);
}

/**
 * The client's message cut to what Redis said (no quoted command, "Command failed: " prefix or lines
 * after the first), at most 200 characters, with `secret` replaced by `<token>`.
 */
export function summarize(error: unknown, secret?: string): string {
  const text = hasMessage(error) ? error.message : String(error);
  const said = (text.split(", command was:")[0] ?? "").replace(/^Command failed: /, "").split("\n")[0] ?? "";
  // Scrubbed before the cut: a cut through the token would leave its first part.
  const safe = scrub(said, secret);
  return safe.length > 200 ? `${safe.slice(0, 199)}…` : safe;
}

/** Whether `error` is a refusal that no retry within one call can heal (a wrong token, a wrong key type, ...). */
export function isRefusal(error: unknown): boolean {
  const said = summarize(error);
  return REFUSAL.test(said) && !PASSING.test(said);
}

/**
 * Whether `error` is a client's own timeout (ioredis `commandTimeout`, node-redis `TimeoutError` and socket
 * timeouts, a fetch `TimeoutError`, a request the client gave up on itself: `GivenUpError`): Redis was reached
 * and did not answer in time; the request may still run.
 */
export function isClientTimeout(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  return (
    /^(Socket)?TimeoutError$|^GivenUpError$/.test(error.name) ||
    /^(Socket)?TimeoutError$/.test(error.constructor.name) ||
    /^Command timed out\b/.test(error.message)
  );
}

/**
 * Whether the connection a request was to go on was refused (`ECONNREFUSED` among its causes): nothing of the
 * request reached the server. Told for the client's last copy only: a client that re-sends one whose
 * connection failed (@upstash/redis by default) may have delivered an earlier copy, its reply lost.
 */
export function isConnectionRefused(error: unknown, depth = 0): boolean {
  if (depth > 4 || typeof error !== "object" || error === null) return false;
  const { code, cause } = error as { code?: unknown; cause?: unknown };
  return code === "ECONNREFUSED" || isConnectionRefused(cause, depth + 1);
}

/**
 * A copy of `error` safe as a `cause` (the original quotes the command): its name, summarized message,
 * string and number properties (`code`, `status`, ...) and stack frames without `secret`; causes alike.
 */
export function redacted(error: unknown, secret?: string, depth = 0): unknown {
  if (!hasMessage(error)) return typeof error === "string" ? summarize(error, secret) : undefined;
  const cause = depth < 4 && error.cause !== undefined ? redacted(error.cause, secret, depth + 1) : undefined;
  const copy = new Error(summarize(error, secret), { cause }) as Error & Record<string, unknown>;
  if (cause === undefined) delete copy.cause;
  for (const [name, value] of Object.entries(error)) {
    if (typeof value === "number") copy[name] = value;
    else if (typeof value === "string") copy[name] = summarize(value, secret);
  }
  copy.name = typeof error.name === "string" ? error.name : "Error";
  const frames = (error.stack ?? "").split("\n").filter((line) => /^\s+at /.test(line));
  copy.stack = [`${copy.name}: ${copy.message}`, ...frames.map((line) => scrub(line, secret))].join("\n");
  return copy;
}

/** An Error, or what a client rejects with in its place (`{ message, status }`). */
function hasMessage(error: unknown): error is Error {
  return error instanceof Error || typeof (error as { message?: unknown } | null)?.message === "string";
}

const SHORT_TOKEN = 8; // characters: a shorter token is likely part of words, and no secret anyway

/** `text` without `secret`: everywhere; a short one (a uuid of "a") only where no letter or digit adjoins it. */
function scrub(text: string, secret: string | undefined): string {
  if (!secret) return text;
  if (secret.length >= SHORT_TOKEN) return text.split(secret).join("<token>");
  const escaped = secret.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
  // No lookbehind: older Safari lacks it, and this runs while an error is being made.
  return text.replace(new RegExp(`(^|[^\\p{L}\\p{N}])${escaped}(?=[^\\p{L}\\p{N}]|$)`, "gu"), "$1<token>");
}
