import { describe, expect, it } from "vitest";
import { entryToJson, replyToJson } from "../../stack/proxy/reply-json";
import { RespError, RespInteger, RespStatus } from "../../stack/resp/reply";

const b64 = (text: string): string => JSON.stringify(Buffer.from(text).toString("base64"));

describe("replyToJson", () => {
  it("base64-encodes every string, status replies included, at every depth", () => {
    expect(replyToJson(new RespStatus("OK"), "base64")).toBe(b64("OK"));
    expect(replyToJson(Buffer.from("bar"), "base64")).toBe(b64("bar"));
    expect(
      replyToJson([new RespStatus("QUEUED"), [Buffer.from("PONG"), [new RespStatus("OK")]]], "base64"),
    ).toBe(`[${b64("QUEUED")},[${b64("PONG")},[${b64("OK")}]]]`);
  });

  it("encodes bytes, not text, in base64 mode", () => {
    expect(replyToJson(Buffer.from([0x00, 0xff, 0xfe]), "base64")).toBe('"AP/+"');
  });

  it("writes integers as exact digits and nil as null, untouched by encoding", () => {
    const reply = [new RespInteger("9223372036854775807"), null, new RespInteger("-3"), []];
    expect(replyToJson(reply, "base64")).toBe("[9223372036854775807,null,-3,[]]");
    expect(replyToJson(reply, "plain")).toBe("[9223372036854775807,null,-3,[]]");
  });

  it("writes plain strings as JSON text, invalid UTF-8 becoming U+FFFD", () => {
    expect(JSON.parse(replyToJson(Buffer.from([0x61, 0xff, 0x62]), "plain"))).toBe("a\uFFFDb");
    expect(JSON.parse(replyToJson(Buffer.from('quote " and \n newline'), "plain"))).toBe(
      'quote " and \n newline',
    );
    expect(replyToJson(new RespStatus("OK"), "plain")).toBe('"OK"');
  });

  it("renders a nested error as its message string, encoded like any string", () => {
    const reply = [new RespInteger("1"), new RespError("ERR inner")];
    expect(replyToJson(reply, "plain")).toBe('[1,"ERR inner"]');
    expect(replyToJson(reply, "base64")).toBe(`[1,${b64("ERR inner")}]`);
  });
});

describe("entryToJson", () => {
  it("writes errors unencoded and without a result key", () => {
    expect(entryToJson(new RespError("NOSCRIPT No matching script. Please use EVAL."), "base64")).toBe(
      '{"error":"NOSCRIPT No matching script. Please use EVAL."}',
    );
  });

  it("keeps the result key for nil", () => {
    expect(entryToJson(null, "base64")).toBe('{"result":null}');
    expect(entryToJson(new RespStatus("OK"), "base64")).toBe(`{"result":${b64("OK")}}`);
  });
});
