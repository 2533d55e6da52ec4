import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { describe, expect, it } from "vitest";
import { DedicatedPool } from "../../stack/proxy/dedicated-pool";
import { createRequestHandler } from "../../stack/proxy/request-handler";
import { forwardScripts } from "../../stack/proxy/scripts/script-gateway";
import { SharedPool } from "../../stack/proxy/shared-pool";
import { createStats } from "../../stack/proxy/stats";
import { SubscriptionStreams } from "../../stack/proxy/subscribe";
import { connectionOptionsFromUrl } from "../../stack/resp/redis-url";
import { createClient } from "./helpers/clients";
import { usePrivateStack } from "./helpers/private-stack";
import { httpRequest, type RawSocketOutcome, rawExchange } from "./helpers/raw-socket";

// Requests that once threw out of the request listener and took the proxy (and the redis-server it started)
// down with them. Raw sockets, so that the bytes of the path reach the proxy exactly as written here.
const stack = usePrivateStack();

function expectJsonError(outcome: RawSocketOutcome, status: number, pattern: RegExp): void {
  expect(outcome).toMatchObject({ kind: "answered", status });
  if (outcome.kind !== "answered") return;
  expect(outcome.headers["content-type"]).toBe("application/json");
  expect(JSON.parse(outcome.body)).toEqual({ error: expect.stringMatching(pattern) });
}

async function expectAlive(): Promise<void> {
  expect(await createClient(stack()).ping()).toBe("PONG");
}

describe("malformed percent-escapes in a subscription path", () => {
  it.each([
    ["POST", "/subscribe/%ZZ"],
    ["GET", "/psubscribe/%E0%A4%A"],
  ])("answers %s %s without a token with the JSON 401, and keeps serving", async (method, path) => {
    const outcome = await rawExchange(stack().proxy.port, [httpRequest(method, path, {}, "[]")], { method });
    expectJsonError(outcome, 401, /^Unauthorized$/);
    await expectAlive();
  });

  it.each([
    ["POST", "/subscribe/%ZZ"],
    ["GET", "/psubscribe/%E0%A4%A"],
    ["POST", "/subscribe/%C0%AF"],
  ])("answers %s %s with a good token with a JSON 400, and keeps serving", async (method, path) => {
    const headers = { authorization: `Bearer ${stack().token}` };
    const outcome = await rawExchange(stack().proxy.port, [httpRequest(method, path, headers, "[]")], {
      method,
    });
    expectJsonError(outcome, 400, /^ERR malformed percent-encoding in the path/);
    expect(stack().proxy.stats.subscriptions).toBe(0);
    await expectAlive();
  });
});

describe("request targets and headers Node lets through", () => {
  it.each(["*]", "*%", "*@]Z"])(
    "answers GET %s (a target the URL parser rejects) with a JSON 400, and keeps serving",
    async (target) => {
      const outcome = await rawExchange(stack().proxy.port, [httpRequest("GET", target)], { method: "GET" });
      expectJsonError(outcome, 400, /^ERR malformed request target/);
      await expectAlive();
    },
  );

  it("answers POST * with a JSON 400 instead of running the command", async () => {
    const headers = { authorization: `Bearer ${stack().token}` };
    const outcome = await rawExchange(stack().proxy.port, [httpRequest("POST", "*", headers, '["PING"]')]);
    expectJsonError(outcome, 400, /^ERR malformed request target/);
  });

  it("serves an absolute-form target by its path, as HTTP/1.1 servers must", async () => {
    const headers = { authorization: `Bearer ${stack().token}` };
    const target = `http://127.0.0.1:${stack().proxy.port}/pipeline`;
    const outcome = await rawExchange(stack().proxy.port, [
      httpRequest("POST", target, headers, '[["PING"]]'),
    ]);
    expect(outcome).toMatchObject({ kind: "answered", status: 200, body: '[{"result":"PONG"}]' });
  });

  it("answers an HTTP/1.1 request without Host with a JSON 400", async () => {
    const request = 'POST / HTTP/1.1\r\nConnection: close\r\nContent-Length: 8\r\n\r\n["PING"]';
    expectJsonError(await rawExchange(stack().proxy.port, [request]), 400, /^ERR missing Host header/);
  });

  it("answers an expectation other than 100-continue with a JSON 417", async () => {
    const headers = { authorization: `Bearer ${stack().token}`, expect: "something-else" };
    const outcome = await rawExchange(stack().proxy.port, [httpRequest("POST", "/", headers, '["PING"]')]);
    expectJsonError(outcome, 417, /^ERR unsupported Expect/);
  });

  it("answers CONNECT with a JSON 405", async () => {
    const request = "CONNECT 127.0.0.1:443 HTTP/1.1\r\nHost: 127.0.0.1:443\r\n\r\n";
    const outcome = await rawExchange(stack().proxy.port, [request], { method: "CONNECT" });
    expectJsonError(outcome, 405, /^ERR method CONNECT not allowed/);
    if (outcome.kind === "answered") expect(outcome.headers.allow).toBe("HEAD, GET, POST, PUT");
  });

  it("answers a malformed chunked body with a JSON 400 while its request is being read", async () => {
    const head = [
      "POST / HTTP/1.1",
      "Host: 127.0.0.1",
      `Authorization: Bearer ${stack().token}`,
      "Transfer-Encoding: chunked",
    ].join("\r\n");
    const outcome = await rawExchange(stack().proxy.port, [`${head}\r\n\r\n4\r\n["PI\r\n`, "zz\r\n"], {
      pauseMs: 20,
    });
    expectJsonError(outcome, 400, /^ERR malformed HTTP request/);
    await expectAlive();
  });

  it("answers a 16 KB Authorization header of spaces with a 401", async () => {
    const headers = { authorization: `Bearer ${" ".repeat(16_000)}x y` };
    const outcome = await rawExchange(stack().proxy.port, [httpRequest("POST", "/", headers, '["PING"]')]);
    expectJsonError(outcome, 401, /^Unauthorized$/);
  });
});

describe("the request listener", () => {
  it("survives a client that disconnects in the middle of its body", async () => {
    const head = `POST / HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${stack().token}\r\nContent-Length: 100\r\n\r\n`;
    const outcome = await rawExchange(stack().proxy.port, [head, '["PI'], {
      pauseMs: 10,
      abortAfterWrite: true,
    });
    expect(outcome.kind).toBe("closed");
    await expectAlive();
  });

  it("turns an unexpected exception into a JSON 500 and keeps serving", async () => {
    const redis = connectionOptionsFromUrl(stack().redisUrl);
    const counters = createStats();
    let failures = 1;
    // A counter that throws once stands for any bug in the handler.
    const stats = Object.defineProperty(counters, "requests", {
      get: () => 0,
      set: () => {
        if (failures-- > 0) throw new Error("counter broke");
      },
    });
    const shared = new SharedPool(redis, 1);
    const dedicated = new DedicatedPool(redis, 1);
    const handler = createRequestHandler({
      token: "t",
      maxBodyBytes: 1024,
      shared,
      dedicated,
      stats,
      redis,
      scripts: forwardScripts,
      streams: new SubscriptionStreams(),
    });
    const server = createServer(handler);
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    try {
      const { port } = server.address() as AddressInfo;
      const request = httpRequest("POST", "/", { authorization: "Bearer t" }, '["PING"]');
      expectJsonError(await rawExchange(port, [request]), 500, /^ERR internal proxy error: counter broke$/);
      expect(await rawExchange(port, [request])).toMatchObject({ status: 200, body: '{"result":"PONG"}' });
    } finally {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
      shared.close();
      dedicated.close();
    }
  });
});
