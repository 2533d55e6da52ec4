import { RespError } from "../../resp/reply";
import { assertCommandAllowed } from "../forbidden-commands";
import { errorResponse, type JsonResponse } from "../json-response";
import { replyToJson } from "../reply-json";
import { parseSingleCommand } from "../request-commands";
import type { RouteContext } from "../route-context";

/**
 * `POST /`: one command. A Redis error is a 400 with the error text unchanged (the client's EVALSHA fallback
 * looks for `NOSCRIPT` in it).
 */
export async function handleSingle(context: RouteContext): Promise<JsonResponse> {
  const command = parseSingleCommand(context.body);
  assertCommandAllowed(command);
  context.stats.commands += 1;
  const prepared = await context.scripts.prepare([command]);
  const [reply = null] = prepared.restore(await context.shared.pick().send(prepared.commands));
  if (reply instanceof RespError) {
    return errorResponse(400, reply.message);
  }
  return { status: 200, body: `{"result":${replyToJson(reply, context.encoding)}}` };
}
