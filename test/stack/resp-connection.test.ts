import { createServer, type Server, type Socket } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RedisServerHandle, startRedisServer } from "../../stack/redis-server";
import { RespConnection } from "../../stack/resp/connection";
import { RespConnectionError, RespReplyError } from "../../stack/resp/errors";
import { connectionOptionsFromUrl } from "../../stack/resp/redis-url";
import { RespError, RespInteger, RespStatus } from "../../stack/resp/reply";
import { keyPrefix } from "./helpers/keys";

describe("RespConnection", () => {
  let redis: RedisServerHandle;
  const open: RespConnection[] = [];
  const connect = (): RespConnection => {
    const connection = new RespConnection({ host: "127.0.0.1", port: redis.port });
    open.push(connection);
    return connection;
  };

  beforeAll(async () => {
    redis = await startRedisServer();
  });
  afterAll(async () => {
    for (const connection of open) {
      connection.close();
    }
    await redis.stop();
  });

  it("round-trips binary values exactly", async () => {
    const connection = connect();
    const key = keyPrefix("resp");
    const value = Buffer.from([0x00, 0xff, 0x0d, 0x0a, 0x80, 0x41]);
    expect(await connection.call("SET", key, value)).toEqual(new RespStatus("OK"));
    expect(await connection.call("GET", key)).toEqual(value);
  });

  it("returns error replies of a batch as values, in order", async () => {
    const key = keyPrefix("resp");
    const replies = await connect().send([["SET", key, "x"], ["INCR", key], ["PING"]]);
    expect(replies[0]).toEqual(new RespStatus("OK"));
    expect(replies[1]).toBeInstanceOf(RespError);
    expect(replies[2]).toEqual(new RespStatus("PONG"));
  });

  it("throws RespReplyError from call() on an error reply", async () => {
    const key = keyPrefix("resp");
    const connection = connect();
    await connection.call("LPUSH", key, "a");
    await expect(connection.call("GET", key)).rejects.toThrow(RespReplyError);
    await expect(connection.call("GET", key)).rejects.toThrow(/^WRONGTYPE/);
  });

  it("never interleaves concurrent batches on one connection", async () => {
    const connection = connect();
    const key = keyPrefix("resp");
    const results = await Promise.all(
      Array.from({ length: 200 }, (_, index) =>
        connection.send([
          ["SET", key, String(index)],
          ["GET", key],
        ]),
      ),
    );
    results.forEach(([, value], index) => {
      expect(value?.toString()).toBe(String(index));
    });
  });

  it("rejects pending calls when the connection drops, then reconnects on the next call", async () => {
    const connection = connect();
    const killer = connect();
    await connection.call("CLIENT", "SETNAME", "victim");
    const blocked = connection.call("BLPOP", keyPrefix("resp"), "0");
    // Redis may close the victim before it answers the killer: catch the rejection now, so it is
    // never unhandled for a moment, and assert on it below.
    const failure = blocked.then(
      () => undefined,
      (error: unknown) => error,
    );
    await expect.poll(async () => String(await killer.call("CLIENT", "LIST"))).toContain("cmd=blpop");
    await killer.call("CLIENT", "KILL", "USER", "default", "SKIPME", "yes");
    const error = await failure;
    expect(error).toBeInstanceOf(RespConnectionError);
    expect(String(error)).toContain(`Redis connection to 127.0.0.1:${redis.port} closed`);
    expect(await connection.call("CLIENT", "GETNAME")).toBeNull();
  });

  it("reports a refused connection clearly", async () => {
    const dead = await startRedisServer();
    await dead.stop();
    const connection = new RespConnection({ host: "127.0.0.1", port: dead.port });
    await expect(connection.call("PING")).rejects.toThrow(RespConnectionError);
    await expect(connection.call("PING")).rejects.toThrow(/ECONNREFUSED/);
  });

  it("fails later calls after close() instead of reconnecting", async () => {
    const connection = new RespConnection({ host: "127.0.0.1", port: redis.port });
    await connection.call("PING");
    connection.close();
    await expect(connection.call("PING")).rejects.toThrow(/closed/);
  });
});

describe("RespConnection handshake and connect timeout", () => {
  let redis: RedisServerHandle;
  let silent: Server;
  const sockets: Socket[] = [];

  beforeAll(async () => {
    redis = await startRedisServer({ extraArgs: ["--requirepass", "s3cret"] });
    // Accepts connections and never answers, like a stalled server.
    silent = createServer((socket) => sockets.push(socket));
    await new Promise<void>((resolve) => silent.listen(0, "127.0.0.1", resolve));
  });
  afterAll(async () => {
    for (const socket of sockets) {
      socket.destroy();
    }
    await new Promise((resolve) => silent.close(resolve));
    await redis.stop();
  });

  it("authenticates and selects the database from the URL", async () => {
    const connection = new RespConnection(
      connectionOptionsFromUrl(`redis://:s3cret@127.0.0.1:${redis.port}/3`),
    );
    try {
      const [, db] = await connection.send([["PING"], ["CLIENT", "INFO"]]);
      expect(String(db)).toContain(" db=3 ");
    } finally {
      connection.close();
    }
  });

  it("fails with the server's reason when the handshake is rejected", async () => {
    const connection = new RespConnection(connectionOptionsFromUrl(`redis://:wrong@127.0.0.1:${redis.port}`));
    await expect(connection.call("PING")).rejects.toThrow(/rejected the connection handshake: WRONGPASS/);
    connection.close();
  });

  it("times out when the server never completes the handshake", async () => {
    const address = silent.address();
    const port = typeof address === "object" && address !== null ? address.port : 0;
    const connection = new RespConnection({
      host: "127.0.0.1",
      port,
      connectTimeoutMs: 100,
      handshake: [["PING"]],
    });
    await expect(connection.call("PING")).rejects.toThrow(
      /Timed out connecting to Redis at 127\.0\.0\.1:\d+ after 100 ms/,
    );
    connection.close();
  });

  it("parses redis URLs", () => {
    expect(connectionOptionsFromUrl("redis://user:p%40ss@[::1]:7000/2")).toEqual({
      host: "::1",
      port: 7000,
      handshake: [
        ["AUTH", "user", "p@ss"],
        ["SELECT", "2"],
      ],
    });
    expect(() => connectionOptionsFromUrl("rediss://127.0.0.1:7000")).toThrow(TypeError);
  });

  it("keeps integers exact end to end", async () => {
    const connection = new RespConnection(
      connectionOptionsFromUrl(`redis://:s3cret@127.0.0.1:${redis.port}`),
    );
    const key = keyPrefix("resp");
    await connection.call("SET", key, "9223372036854775806");
    expect(await connection.call("INCR", key)).toEqual(new RespInteger("9223372036854775807"));
    connection.close();
  });
});
