import { describe, expect, inject, it } from "vitest";
import { clientVariants, createClient, type Endpoint } from "./helpers/clients";
import { keyPrefix } from "./helpers/keys";
import { fromBase64, rawRequest } from "./helpers/raw-http";

// Conformance through the real @upstash/redis client, against the suite's server (the local stack, or the
// server named by UPSTASH_REDIS_REST_URL/TOKEN).
const endpoint: Endpoint = { url: inject("upstashUrl"), token: inject("upstashToken") };

describe.each(clientVariants)("values through @upstash/redis ($name)", ({ options }) => {
  // Without automatic deserialization every value comes back as the exact decoded string.
  const redis = createClient(endpoint, { ...options, automaticDeserialization: false });

  it.each([
    ["bar", "bar"],
    ["OK", "OK"],
    ["PONG", "PONG"],
    ["123", "123"],
    ["true", "true"],
    ["empty", ""],
    ["base64-looking", "VXBzdGFzaCBpcyByZWFsbHkgY29vbA"],
    ["JSON text", '{"a":[1,"b"]}'],
    ["non-ASCII", "héllo wörld ✓ 日本語 🎉"],
  ])("round-trips %s", async (_name, value) => {
    const key = keyPrefix("value");
    expect(await redis.set(key, value)).toBe("OK");
    expect(await redis.get(key)).toBe(value);
    expect(await redis.mget(key, `${key}missing`)).toEqual([value, null]);
  });

  it("round-trips a 512 KiB value", async () => {
    const key = keyPrefix("large");
    const value = "0123456789abcdef".repeat(32 * 1024);
    await redis.set(key, value);
    expect(await redis.strlen(key)).toBe(512 * 1024);
    expect(await redis.get(key)).toBe(value);
  });

  it("returns PING, integers and nil", async () => {
    const key = keyPrefix("misc");
    expect(await redis.ping()).toBe("PONG");
    expect(await redis.incrby(key, 41)).toBe(41);
    expect(await redis.incr(key)).toBe(42);
    expect(await redis.get(`${key}missing`)).toBeNull();
  });

  it("returns nested arrays from EVAL with strings, integers and nil", async () => {
    const script = "return {1, 'a', {2, 'OK', false, {ARGV[1]}}, 'PONG'}";
    expect(await redis.eval(script, [], ["héllo"])).toEqual([1, "a", [2, "OK", null, ["héllo"]], "PONG"]);
  });

  it("reads the ASCII slice of a binary value with GETRANGE", async () => {
    const key = keyPrefix("binary");
    await redis.eval("return redis.call('set', KEYS[1], string.char(0, 255, 13, 10, 97, 98))", [key], []);
    expect(await redis.getrange(key, 2, 5)).toBe("\r\nab");
    expect(await redis.strlen(key)).toBe(6);
  });

  it("throws the WRONGTYPE error", async () => {
    const key = keyPrefix("wrongtype");
    await redis.lpush(key, "a");
    await expect(redis.get(key)).rejects.toThrow(
      /WRONGTYPE Operation against a key holding the wrong kind of value/,
    );
  });

  it("runs a pipeline with one failing command", async () => {
    const key = keyPrefix("pipeline");
    const results = await redis.pipeline().set(key, "v").incr(key).get(key).exec({ keepErrors: true });
    expect(results).toEqual([
      { result: "OK", error: undefined },
      { result: undefined, error: "ERR value is not an integer or out of range" },
      { result: "v", error: undefined },
    ]);
    await expect(redis.pipeline().set(key, "v").incr(key).exec()).rejects.toThrow(
      /Command 2 \[ incr \] failed/,
    );
  });
});

describe("automatic deserialization (the client default)", () => {
  it("turns numeric and boolean strings into numbers and booleans, which the lock library must expect", async () => {
    const redis = createClient(endpoint);
    const key = keyPrefix("deserialize");
    await redis.mset({
      [`${key}n`]: "123",
      [`${key}b`]: "true",
      [`${key}u`]: "550e8400-e29b-41d4-a716-446655440000",
    });
    expect(await redis.mget(`${key}n`, `${key}b`, `${key}u`)).toEqual([
      123,
      true,
      "550e8400-e29b-41d4-a716-446655440000",
    ]);
  });
});

describe("binary values on the wire", () => {
  it("come back byte-exact in base64", async () => {
    const key = keyPrefix("wire-binary");
    const bytes = [0, 255, 254, 128, 13, 10, 97];
    await createClient(endpoint).eval(
      `return redis.call('set', KEYS[1], string.char(${bytes.join(",")}))`,
      [key],
      [],
    );
    const response = await rawRequest(endpoint, { base64: true, json: ["get", key] });
    expect([...fromBase64((response.json as { result: unknown }).result)]).toEqual(bytes);
  });
});
