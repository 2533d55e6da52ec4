import { describe, expect, it } from "vitest";
import { encodeCommands } from "../../stack/resp/encoder";

describe("encodeCommands", () => {
  it("encodes string arguments with their UTF-8 byte lengths", () => {
    expect(encodeCommands([["SET", "k", "héllo"]]).toString("utf8")).toBe(
      "*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$6\r\nhéllo\r\n",
    );
  });

  it("splices Buffer arguments in as raw bytes", () => {
    const bytes = Buffer.from([0x00, 0xff, 0x0d, 0x0a]);
    const encoded = encodeCommands([["SET", "k", bytes, "PX", "10"]]);
    expect(encoded).toEqual(
      Buffer.concat([
        Buffer.from("*5\r\n$3\r\nSET\r\n$1\r\nk\r\n$4\r\n"),
        bytes,
        Buffer.from("\r\n$2\r\nPX\r\n$2\r\n10\r\n"),
      ]),
    );
  });

  it("puts a whole batch into one buffer, in order", () => {
    expect(encodeCommands([["PING"], ["GET", ""]]).toString()).toBe(
      "*1\r\n$4\r\nPING\r\n*2\r\n$3\r\nGET\r\n$0\r\n\r\n",
    );
  });

  it("refuses an empty command, which Redis would never answer", () => {
    expect(() => encodeCommands([["PING"], []])).toThrow(TypeError);
  });
});
