import type { RespReply } from "../../resp/reply";
import { RespError } from "../../resp/reply";
import { assertCommandAllowed } from "../forbidden-commands";
import { errorResponse, type JsonResponse } from "../json-response";
import { entryToJson } from "../reply-json";
import { parseCommandList } from "../request-commands";
import type { RouteContext } from "../route-context";
import type { PreparedCommands } from "../scripts/script-gateway";

/**
 * `POST /multi-exec`: MULTI, the commands, EXEC, on a connection borrowed for this transaction alone (a shared
 * one could see another request's MULTI: "MULTI calls can not be nested").
 *
 * - A queue-time error discards the transaction: EXEC's `EXECABORT ...` becomes a 400 `{"error"}`.
 * - A runtime error inside EXEC is an `{"error"}` entry among the results, with status 200 (Redis semantics:
 *   the other commands still ran).
 */
export async function handleMultiExec(context: RouteContext): Promise<JsonResponse> {
  const commands = parseCommandList(context.body);
  commands.forEach(assertCommandAllowed);
  context.stats.commands += commands.length;
  const prepared = await context.scripts.prepare(commands);
  const replies = await context.dedicated.use((connection) =>
    connection.send([["MULTI"], ...prepared.commands, ["EXEC"]]),
  );
  return execResponse(replies.at(-1) ?? null, prepared, context);
}

function execResponse(exec: RespReply, prepared: PreparedCommands, context: RouteContext): JsonResponse {
  if (exec instanceof RespError) {
    return errorResponse(400, exec.message);
  }
  if (!Array.isArray(exec)) {
    // A nil EXEC means a WATCHed key changed; WATCH is rejected, so this only guards against the impossible.
    return errorResponse(400, "EXECABORT Transaction discarded");
  }
  const entries = prepared.restore(exec).map((reply) => entryToJson(reply, context.encoding));
  return { status: 200, body: `[${entries.join(",")}]` };
}
