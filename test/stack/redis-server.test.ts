import { describe, expect, it } from "vitest";
import { startRedisServer } from "../../stack/redis-server";
import { RespConnection } from "../../stack/resp/connection";
import { RespConnectionError } from "../../stack/resp/errors";

async function ping(port: number): Promise<unknown> {
  const connection = new RespConnection({ host: "127.0.0.1", port });
  try {
    return await connection.call("PING");
  } finally {
    connection.close();
  }
}

describe("startRedisServer", () => {
  it("starts on a free port other than 6379 and stops", async () => {
    const server = await startRedisServer();
    try {
      expect(server.port).not.toBe(6379);
      expect(server.url).toBe(`redis://127.0.0.1:${server.port}`);
      await expect(ping(server.port)).resolves.toMatchObject({ text: "PONG" });
    } finally {
      await server.stop();
    }
    await expect(ping(server.port)).rejects.toThrow(RespConnectionError);
    await server.stop();
  });

  it("restarts on the same port, without the data when persistence is off", async () => {
    const server = await startRedisServer();
    const connection = new RespConnection({ host: "127.0.0.1", port: server.port });
    try {
      await connection.call("SET", "k", "v");
      await server.restart();
      expect(await connection.call("GET", "k")).toBeNull();
    } finally {
      connection.close();
      await server.stop();
    }
  });

  it("passes extra arguments, which override the defaults", async () => {
    const server = await startRedisServer({ extraArgs: ["--appendonly", "yes", "--maxmemory", "12mb"] });
    const connection = new RespConnection({ host: "127.0.0.1", port: server.port });
    try {
      const [appendonly, maxmemory] = await connection.send([
        ["CONFIG", "GET", "appendonly"],
        ["CONFIG", "GET", "maxmemory"],
      ]);
      expect(String((appendonly as Buffer[])[1])).toBe("yes");
      expect(String((maxmemory as Buffer[])[1])).toBe(String(12 * 1024 * 1024));
      await connection.call("SET", "kept", "across restart");
      await server.restart();
      expect(String(await connection.call("GET", "kept"))).toBe("across restart");
    } finally {
      connection.close();
      await server.stop();
    }
  });

  it("fails with the server's output when it cannot start", async () => {
    await expect(startRedisServer({ extraArgs: ["--no-such-directive", "1"] })).rejects.toThrow(
      /exited.*Bad directive/s,
    );
  });

  it("fails clearly when the binary is missing", async () => {
    await expect(startRedisServer({ binary: "/nonexistent/redis-server" })).rejects.toThrow(
      /is it installed/,
    );
  });
});
