import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { newRedis, uniqueId } from "../support/redis";
import { type ServedRoute, serveRoute } from "./support/serve-route";
import { useUpstashEnv } from "./support/upstash-env";

// examples/route-handler.ts served over real HTTP, as a framework would serve the route file.
useUpstashEnv();
const redis = newRedis();
let example: typeof import("../../examples/route-handler");
let served: ServedRoute;

beforeAll(async () => {
  example = await import("../../examples/route-handler");
  served = await serveRoute(example.POST);
});

afterAll(() => served?.close());

function post(body: string): Promise<Response> {
  return fetch(`${served.url}/api/orders/capture`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body,
  });
}

describe("examples/route-handler.ts", () => {
  it("captures once: a request during the capture gets 409, and the lock is gone afterwards", async () => {
    const orderId = uniqueId("order");
    const lockKey = `order:${orderId}:capture`;
    const heldDuringCapture: number[] = [];
    let finishCapture = () => {};
    const captureCanFinish = new Promise<void>((resolve) => {
      finishCapture = resolve;
    });
    example.work.capturePayment = async (id) => {
      heldDuringCapture.push(await redis.exists(lockKey));
      await captureCanFinish;
      return `receipt-${id}`;
    };

    const first = post(JSON.stringify({ orderId }));
    await vi.waitFor(() => expect(heldDuringCapture).toEqual([1]));
    const second = await post(JSON.stringify({ orderId }));
    expect(second.status).toBe(409);
    expect(second.headers.get("retry-after")).toBe("1");
    finishCapture();

    const response = await first;
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ orderId, receipt: `receipt-${orderId}` });
    expect(await redis.exists(lockKey)).toBe(0);
    expect((await post(JSON.stringify({ orderId }))).status).toBe(200);
  });

  it("releases the lock when the capture throws, so a retry can capture", async () => {
    const orderId = uniqueId("order");
    example.work.capturePayment = async () => {
      throw new Error("card declined");
    };
    expect((await post(JSON.stringify({ orderId }))).status).toBe(500);
    expect(await redis.exists(`order:${orderId}:capture`)).toBe(0);
  });

  it.each([
    ["no orderId", "{}"],
    ["an empty orderId", '{"orderId":""}'],
    ["a body that is not JSON", "capture please"],
  ])("answers 400 to %s, before touching Redis", async (_name, body) => {
    const response = await post(body);
    expect(response.status).toBe(400);
    expect(await response.json()).toEqual({ error: expect.stringMatching(/orderId/) });
  });
});
