import { describe, expect, it } from "vitest";
import { RespProtocolError } from "../../stack/resp/errors";
import { RespParser } from "../../stack/resp/parser";
import { RespError, RespInteger, type RespReply, RespStatus } from "../../stack/resp/reply";

function parseAll(...chunks: (string | Buffer)[]): RespReply[] {
  const parser = new RespParser();
  return chunks.flatMap((chunk) =>
    parser.feed(Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk, "latin1")),
  );
}

function byteByByte(bytes: Buffer): RespReply[] {
  const parser = new RespParser();
  const replies: RespReply[] = [];
  for (let index = 0; index < bytes.length; index += 1) {
    replies.push(...parser.feed(bytes.subarray(index, index + 1)));
  }
  return replies;
}

describe("RespParser", () => {
  it("tells status replies from bulk strings", () => {
    const [status, bulk] = parseAll("+OK\r\n$2\r\nOK\r\n");
    expect(status).toEqual(new RespStatus("OK"));
    expect(bulk).toEqual(Buffer.from("OK"));
  });

  it("keeps integers as their exact digits, beyond 2^53 and negative", () => {
    const [max, negative] = parseAll(":9223372036854775807\r\n:-9007199254740993\r\n");
    expect(max).toBeInstanceOf(RespInteger);
    expect((max as RespInteger).digits).toBe("9223372036854775807");
    expect((max as RespInteger).toBigInt()).toBe(9223372036854775807n);
    expect((negative as RespInteger).digits).toBe("-9007199254740993");
  });

  it("parses nil bulk, nil array, empty array and empty bulk", () => {
    expect(parseAll("$-1\r\n*-1\r\n*0\r\n$0\r\n\r\n")).toEqual([null, null, [], Buffer.alloc(0)]);
  });

  it("returns errors as values at any depth", () => {
    const [top, nested] = parseAll("-ERR top\r\n*2\r\n:1\r\n*2\r\n-WRONGTYPE deep\r\n$-1\r\n");
    expect(top).toEqual(new RespError("ERR top"));
    expect(nested).toEqual([new RespInteger("1"), [new RespError("WRONGTYPE deep"), null]]);
    expect((top as RespError).code).toBe("ERR");
  });

  it("is binary-safe: CRLF, NUL and high bytes inside a bulk string", () => {
    const value = Buffer.from([0x0d, 0x0a, 0x00, 0xff, 0xfe, 0x80]);
    const [bulk] = parseAll(Buffer.concat([Buffer.from("$6\r\n"), value, Buffer.from("\r\n")]));
    expect(bulk).toEqual(value);
  });

  it("gives the same replies fed byte by byte as fed whole", () => {
    const wire = Buffer.from(
      "*3\r\n$3\r\nfoo\r\n*2\r\n:42\r\n-ERR x\r\n$-1\r\n+PONG\r\n$5\r\nh\xe9llo\r\n*0\r\n:-1\r\n",
      "latin1",
    );
    const whole = parseAll(wire);
    expect(whole).toHaveLength(5);
    expect(byteByByte(wire)).toEqual(whole);
  });

  it("reassembles a large bulk string split over many chunks", () => {
    const value = Buffer.alloc(512 * 1024, "abcdefgh");
    const wire = Buffer.concat([Buffer.from(`$${value.length}\r\n`), value, Buffer.from("\r\n+OK\r\n")]);
    const parser = new RespParser();
    const replies: RespReply[] = [];
    for (let offset = 0; offset < wire.length; offset += 16_384) {
      replies.push(...parser.feed(wire.subarray(offset, offset + 16_384)));
    }
    expect(replies).toHaveLength(2);
    expect((replies[0] as Buffer).equals(value)).toBe(true);
    expect(parser.inProgress).toBe(false);
  });

  it("reports a reply in progress until it is complete", () => {
    const parser = new RespParser();
    expect(parser.feed(Buffer.from("*2\r\n:1\r\n"))).toEqual([]);
    expect(parser.inProgress).toBe(true);
    expect(parser.feed(Buffer.from(":2\r\n"))).toEqual([[new RespInteger("1"), new RespInteger("2")]]);
    expect(parser.inProgress).toBe(false);
  });

  it.each([
    ["an unknown type byte", "?what\r\n"],
    ["a malformed integer", ":12x\r\n"],
    ["a malformed length", "$abc\r\n"],
    ["a bulk string without its CRLF", "$2\r\nabcd\r\n"],
    ["a line ending in CR only", "+OK\rX"],
  ])("throws RespProtocolError on %s", (_name, wire) => {
    expect(() => parseAll(wire)).toThrow(RespProtocolError);
  });
});
