import type { Command } from "./command";

/**
 * Encodes commands as RESP2 multi-bulk requests, all into one Buffer, so a batch can go out in a single
 * socket write and never interleave with another batch on the same connection.
 *
 * String arguments are gathered into one text run and converted once; Buffers are spliced in as they are.
 *
 * @throws TypeError when a command has no elements: Redis answers nothing to `*0`, which would shift every
 * later reply onto the wrong caller.
 */
export function encodeCommands(commands: readonly Command[]): Buffer {
  const parts: Buffer[] = [];
  let text = "";
  for (const command of commands) {
    if (command.length === 0) {
      throw new TypeError("Cannot encode an empty command");
    }
    text += `*${command.length}\r\n`;
    for (const arg of command) {
      if (typeof arg === "string") {
        text += `$${Buffer.byteLength(arg)}\r\n${arg}\r\n`;
      } else {
        parts.push(Buffer.from(`${text}$${arg.length}\r\n`), arg);
        text = "\r\n";
      }
    }
  }
  parts.push(Buffer.from(text));
  return parts.length === 1 ? (parts[0] as Buffer) : Buffer.concat(parts);
}
