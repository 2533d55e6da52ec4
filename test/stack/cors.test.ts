import { describe, expect, it, vi } from "vitest";
import { createClient } from "./helpers/clients";
import { usePrivateStack } from "./helpers/private-stack";
import { rawRequest } from "./helpers/raw-http";

// The proxy answers browsers the way Upstash does. The browser runtime test (test/runtimes/chromium.test.ts)
// proves a real page can call it cross-origin; these check the headers themselves.
const stack = usePrivateStack();

/** Request headers a browser may send cross-origin without asking (the Fetch standard's safelist). */
const SAFELISTED = new Set(["accept", "accept-language", "content-language", "range"]);
/** Headers a page may not set at all: a browser drops them (subscribe() sets `Connection`). */
const FORBIDDEN = new Set(["connection", "keep-alive", "content-length", "host", "transfer-encoding"]);

function preflight(path: string, requestHeaders: string): Promise<Response> {
  return fetch(`${stack().url}${path}`, {
    method: "OPTIONS",
    headers: {
      origin: "http://app.example",
      "access-control-request-method": "POST",
      "access-control-request-headers": requestHeaders,
    },
  });
}

/**
 * The header names `@upstash/redis` itself sets on its requests (with telemetry and read-your-writes on, and on
 * a subscription's stream), seen by standing in for `fetch`: headers fetch adds on its own never need the
 * server's permission.
 */
async function headersTheClientSets(): Promise<string[]> {
  const names = new Set<string>();
  vi.stubGlobal("fetch", async (url: string, init: RequestInit) => {
    new Headers(init.headers).forEach((_value, name) => {
      names.add(name);
    });
    // Auto-pipelining (the default) sends single commands to /pipeline.
    const body = url.endsWith("/pipeline") ? '[{"result":"PONG"}]' : '{"result":"PONG"}';
    return new Response(body, { headers: { "upstash-sync-token": "t-1" } });
  });
  try {
    const client = createClient(
      { url: "http://upstash.invalid", token: "t" },
      { enableTelemetry: true, readYourWrites: true },
    );
    await client.ping();
    await client.ping(); // the second request carries the sync token the first answer gave
    // subscribe() streams server-sent events with headers of its own (the lock subscribes while it waits).
    const subscriber = client.subscribe("cors-channel");
    await vi.waitFor(() => expect(names).toContain("cache-control"));
    await subscriber.unsubscribe();
  } finally {
    vi.unstubAllGlobals();
  }
  return [...names];
}

describe("CORS preflight", () => {
  it.each(["/", "/pipeline", "/multi-exec"])(
    "answers a preflight to %s with 204 and no token",
    async (path) => {
      const response = await preflight(path, "authorization, content-type, upstash-encoding");
      expect(response.status).toBe(204);
      expect(await response.text()).toBe("");
      expect(response.headers.get("access-control-allow-origin")).toBe("*");
      expect(response.headers.get("access-control-allow-methods")).toBe("POST, GET, PUT, HEAD, OPTIONS");
      expect(response.headers.get("access-control-expose-headers")).toBe("upstash-sync-token");
      expect(Number(response.headers.get("access-control-max-age"))).toBeGreaterThan(0);
    },
  );

  it("allows every non-safelisted header @upstash/redis sends", async () => {
    const needed = (await headersTheClientSets()).filter(
      (name) => !SAFELISTED.has(name) && !FORBIDDEN.has(name),
    );
    expect(needed).toEqual(
      expect.arrayContaining([
        "authorization",
        "content-type",
        "upstash-encoding",
        "upstash-sync-token",
        "upstash-telemetry-sdk",
        "cache-control",
      ]),
    );
    const response = await preflight("/", needed.join(", "));
    const allowed = (response.headers.get("access-control-allow-headers") ?? "")
      .split(",")
      .map((name) => name.trim().toLowerCase());
    expect(allowed).toEqual(expect.arrayContaining(needed));
  });

  it("keeps 405 for a bare OPTIONS, which is not a preflight", async () => {
    const response = await rawRequest(stack(), { method: "OPTIONS" });
    expect(response.status).toBe(405);
    expect(response.headers.get("access-control-allow-origin")).toBe("*");
  });
});

describe("CORS on every response", () => {
  it.each([
    ["a result", {}, 200],
    ["a Redis error", { json: ["incr", "cors:not-a-number", "x"] }, 400],
    ["a wrong token", { token: "wrong" }, 401],
    ["an unknown route", { path: "/nope" }, 404],
    ["a method Upstash refuses", { method: "DELETE" }, 405],
  ] as const)("lets a page read %s", async (_name, options, status) => {
    const response = await rawRequest(stack(), { json: ["ping"], ...options });
    expect(response.status).toBe(status);
    expect(response.headers.get("access-control-allow-origin")).toBe("*");
    expect(response.headers.get("access-control-expose-headers")).toBe("upstash-sync-token");
  });
});
