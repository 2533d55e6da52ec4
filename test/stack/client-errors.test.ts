import { errors } from "@upstash/redis";
import { describe, expect, it } from "vitest";
import { clientVariants, createClient } from "./helpers/clients";
import { keyPrefix } from "./helpers/keys";
import { usePrivateStack } from "./helpers/private-stack";
import { rawRequest } from "./helpers/raw-http";

// A private stack: SCRIPT FLUSH must not disturb other test files' scripts, and the request counter must only
// see this file's requests.
const stack = usePrivateStack();

describe.each(clientVariants)("errors through @upstash/redis ($name)", ({ options }) => {
  it("throws UpstashError on a wrong token", async () => {
    const redis = createClient({ url: stack().url, token: "wrong-token" }, options);
    const failure = redis.get(keyPrefix("auth"));
    await expect(failure).rejects.toBeInstanceOf(errors.UpstashError);
    await expect(failure).rejects.toThrow(/Unauthorized/);
  });

  it("throws on a request body over 1 MB (10^6 bytes)", async () => {
    const redis = createClient(stack(), options);
    await expect(redis.set(keyPrefix("large"), "x".repeat(1_000_000))).rejects.toThrow(
      /ERR max request size exceeded/,
    );
  });

  it("passes the NOSCRIPT text intact", async () => {
    const redis = createClient(stack(), options);
    await expect(redis.evalsha("f".repeat(40), [], [])).rejects.toThrow(
      "NOSCRIPT No matching script. Please use EVAL.",
    );
  });

  it("falls back from EVALSHA to EVAL after SCRIPT FLUSH", async () => {
    const redis = createClient(stack(), options);
    const script = redis.createScript<string>(`return 'ran ' .. ARGV[1] .. ' ${Math.random()}'`);
    expect(await script.exec([], ["first"])).toMatch(/^ran first/);
    await rawRequest(stack(), { json: ["script", "flush"] });
    const { stats } = stack().proxy;
    const commandsBefore = stats.commands;
    expect(await script.exec([], ["second"])).toMatch(/^ran second/);
    // EVALSHA answered NOSCRIPT, then EVAL ran: two commands.
    expect(stats.commands - commandsBefore).toBe(2);
    const commandsAfterFallback = stats.commands;
    expect(await script.exec([], ["third"])).toMatch(/^ran third/);
    // The script is cached again: EVALSHA alone.
    expect(stats.commands - commandsAfterFallback).toBe(1);
  });
});
