import { RespError, type RespReply } from "../../resp/reply";
import { refusalOf } from "../forbidden-commands";
import type { JsonResponse } from "../json-response";
import { entryToJson } from "../reply-json";
import { parseCommandList } from "../request-commands";
import type { RouteContext } from "../route-context";

/**
 * `POST /pipeline`: several commands, not atomic, always 200 with one entry per command. They are written
 * together on one shared connection, so they run in order and other requests' commands never land between
 * them on that connection. A command the REST API refuses gets its error entry and is not sent; the others
 * still run, as a failing command does not stop those after it.
 */
export async function handlePipeline(context: RouteContext): Promise<JsonResponse> {
  const commands = parseCommandList(context.body);
  const refusals = commands.map(refusalOf);
  const allowed = commands.filter((_, index) => refusals[index] === undefined);
  context.stats.commands += allowed.length; // as a refused single command, a refused entry is not counted
  const prepared = await context.scripts.prepare(allowed);
  const replies = prepared.restore(
    allowed.length > 0 ? await context.shared.pick().send(prepared.commands) : [],
  );
  let next = 0;
  const entries = refusals.map(
    (refusal): RespReply => (refusal === undefined ? (replies[next++] as RespReply) : new RespError(refusal)),
  );
  return { status: 200, body: `[${entries.map((reply) => entryToJson(reply, context.encoding)).join(",")}]` };
}
