// What a failed request said, told without what must not leak: client errors quote the whole
// command ("command was: [...]"), script text and lock token included.

/** Errors Redis (or the REST endpoint) gives for a request that cannot succeed however often it is sent. */
const REFUSAL =
  /^(WRONGPASS|NOAUTH|NOPERM|WRONGTYPE|Unauthorized|Forbidden)\b|invalid token|unknown command|wrong number of arguments|syntax error|Error running script|@user_script|^ERR .*script/i;

/**
 * The client's message cut to what Redis said: without the quoted command, the client's
 * "Command failed: " prefix, or anything after the first line; at most 200 characters; `secret`
 * replaced by `<token>`.
 */
export function summarize(error: unknown, secret?: string): string {
  const text = error instanceof Error ? error.message : String(error);
  const said = (text.split(", command was:")[0] ?? "").replace(/^Command failed: /, "").split("\n")[0] ?? "";
  return scrub(said.length > 200 ? `${said.slice(0, 199)}…` : said, secret);
}

/** Whether `error` is a refusal that no retry within one call can heal (a wrong token, a wrong key type, ...). */
export function isRefusal(error: unknown): boolean {
  return REFUSAL.test(summarize(error));
}

/**
 * A copy of `error` safe to hand on as a `cause`: the same name, a summarized message, the string
 * and number properties (`code`, `status`, ...) and the stack frames, each without `secret`, and
 * the same done to its own causes. The original is not kept: it quotes the command.
 */
export function redacted(error: unknown, secret?: string, depth = 0): unknown {
  if (!(error instanceof Error)) return typeof error === "string" ? summarize(error, secret) : undefined;
  const cause = depth < 4 && error.cause !== undefined ? redacted(error.cause, secret, depth + 1) : undefined;
  const copy = new Error(summarize(error, secret), { cause }) as Error & Record<string, unknown>;
  if (cause === undefined) delete copy.cause;
  for (const [name, value] of Object.entries(error)) {
    if (typeof value === "number") copy[name] = value;
    else if (typeof value === "string") copy[name] = summarize(value, secret);
  }
  copy.name = error.name;
  const frames = (error.stack ?? "").split("\n").filter((line) => /^\s+at /.test(line));
  copy.stack = [`${copy.name}: ${copy.message}`, ...frames.map((line) => scrub(line, secret))].join("\n");
  return copy;
}

function scrub(text: string, secret: string | undefined): string {
  return secret ? text.split(secret).join("<token>") : text;
}
