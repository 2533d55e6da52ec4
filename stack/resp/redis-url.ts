import type { Command } from "./command";
import type { RespConnectionOptions } from "./connection";

/**
 * Turns a `redis://[user[:password]@]host[:port][/db]` URL into connection options, with AUTH and SELECT as
 * the handshake.
 *
 * @throws TypeError for another scheme (`rediss://` needs TLS, which this client does not speak) or a bad db.
 */
export function connectionOptionsFromUrl(url: string): RespConnectionOptions {
  const parsed = new URL(url);
  if (parsed.protocol !== "redis:") {
    throw new TypeError(`Expected a redis:// URL, got ${JSON.stringify(url)}`);
  }
  const handshake: Command[] = [];
  const password = decodeURIComponent(parsed.password);
  const username = decodeURIComponent(parsed.username);
  if (password !== "") {
    handshake.push(username === "" ? ["AUTH", password] : ["AUTH", username, password]);
  }
  const db = parsed.pathname.replace(/^\//, "");
  if (db !== "") {
    if (!/^\d+$/.test(db)) {
      throw new TypeError(`Expected a database number in ${JSON.stringify(url)}, got ${JSON.stringify(db)}`);
    }
    handshake.push(["SELECT", db]);
  }
  return {
    // URL keeps the brackets of an IPv6 literal; net.connect wants the bare address.
    host: parsed.hostname.replace(/^\[(.*)\]$/, "$1"),
    port: parsed.port === "" ? 6379 : Number(parsed.port),
    handshake,
  };
}
