import { assertCommandAllowed } from "../forbidden-commands";
import type { JsonResponse } from "../json-response";
import { entryToJson } from "../reply-json";
import { parseCommandList } from "../request-commands";
import type { RouteContext } from "../route-context";

/**
 * `POST /pipeline`: several commands, not atomic, always 200 with one entry per command. They are written
 * together on one shared connection, so they run in order and other requests' commands never land between
 * them on that connection.
 */
export async function handlePipeline(context: RouteContext): Promise<JsonResponse> {
  const commands = parseCommandList(context.body);
  commands.forEach(assertCommandAllowed);
  context.stats.commands += commands.length;
  const prepared = await context.scripts.prepare(commands);
  const replies = prepared.restore(await context.shared.pick().send(prepared.commands));
  return { status: 200, body: `[${replies.map((reply) => entryToJson(reply, context.encoding)).join(",")}]` };
}
