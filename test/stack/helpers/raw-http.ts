import type { Endpoint } from "./clients";

/** Options of {@link rawRequest}. */
export interface RawRequestOptions {
  /** Path after the base URL, e.g. `/pipeline`. */
  readonly path?: string;
  readonly method?: string;
  /** Bearer token; `null` sends no Authorization header. Defaults to the endpoint's token. */
  readonly token?: string | null;
  /** Serialized as JSON. */
  readonly json?: unknown;
  /** Sent as is, instead of `json`. */
  readonly body?: string;
  /** Send `Upstash-Encoding: base64`. */
  readonly base64?: boolean;
  readonly headers?: Readonly<Record<string, string>>;
}

/** A response with its body as text and, when it parses, as JSON. */
export interface RawResponse {
  readonly status: number;
  readonly headers: Headers;
  readonly text: string;
  /** `undefined` when the body is not JSON. */
  readonly json: unknown;
}

/** A request made with plain `fetch`, to check the wire format the client would hide. */
export async function rawRequest(endpoint: Endpoint, options: RawRequestOptions = {}): Promise<RawResponse> {
  const token = options.token === undefined ? endpoint.token : options.token;
  const headers: Record<string, string> = { "content-type": "application/json", ...options.headers };
  if (token !== null) {
    headers.authorization = `Bearer ${token}`;
  }
  if (options.base64) {
    headers["upstash-encoding"] = "base64";
  }
  const method = options.method ?? "POST";
  const body = options.body ?? (options.json === undefined ? undefined : JSON.stringify(options.json));
  const response = await fetch(`${endpoint.url}${options.path ?? ""}`, {
    method,
    headers,
    ...(body === undefined ? {} : { body }),
  });
  const text = await response.text();
  return { status: response.status, headers: response.headers, text, json: parseJson(text) };
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** Decodes a base64 result string to its bytes. */
export function fromBase64(value: unknown): Buffer {
  if (typeof value !== "string") {
    throw new TypeError(`Expected a base64 string, got ${JSON.stringify(value)}`);
  }
  return Buffer.from(value, "base64");
}
