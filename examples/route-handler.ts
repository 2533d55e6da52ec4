// A Next.js App Router route handler, e.g. app/api/orders/capture/route.ts. It uses nothing from Next.js, only
// the Web standard Request and Response, so the same function serves Remix, SvelteKit, Hono, Deno.serve or
// Bun.serve unchanged, on the Node or the Edge runtime.
import { Lock } from "@upstash/lock";
import { Redis } from "@upstash/redis";

const redis = Redis.fromEnv();

/**
 * `POST {"orderId": "..."}`: captures the order's payment. A double click, a retried request or a second tab
 * arriving while the first capture runs gets 409 instead of charging twice.
 */
export async function POST(request: Request): Promise<Response> {
  const body = (await request.json().catch(() => undefined)) as { orderId?: unknown } | undefined;
  const orderId = body?.orderId;
  if (typeof orderId !== "string" || orderId === "") {
    return Response.json({ error: "Expected a JSON body with an orderId" }, { status: 400 });
  }

  // One try: a request should answer at once, not queue behind another capture of the same order.
  const lock = new Lock({ id: `order:${orderId}:capture`, redis, lease: 15_000, retry: { attempts: 1 } });
  if (!(await lock.acquire())) {
    return Response.json(
      { error: "This order is already being captured" },
      { status: 409, headers: { "Retry-After": "1" } },
    );
  }
  try {
    const receipt = await capturePayment(orderId);
    return Response.json({ orderId, receipt });
  } finally {
    await lock.release();
  }
}

/** Stands in for the reader's payment provider; the example's test swaps in its own. */
export const work = { capturePayment: async (orderId: string): Promise<string> => `receipt-${orderId}` };
function capturePayment(orderId: string): Promise<string> {
  return work.capturePayment(orderId);
}
