/**
 * A fresh random lock token, from Web Crypto (every supported runtime has it).
 * @throws {TypeError} where `crypto.randomUUID()` is missing, saying how to pass a token instead.
 */
export function newToken(): string {
  const crypto = (globalThis as { crypto?: { randomUUID?: () => string } }).crypto;
  if (typeof crypto?.randomUUID !== "function") {
    throw new TypeError(
      "`crypto.randomUUID()` is missing here (Web Crypto: Node 20+, Bun, Deno, edge runtimes, https pages): pass `acquire({ uuid })`",
    );
  }
  return crypto.randomUUID();
}

let lastOrder = 0;

/**
 * A fresh id per request (an acquire try, a release, an extend): `<order>-<random>`, spaceless (scripts keep
 * lists of them). The order (this process's µs clock, strictly increasing) keeps its ids distinct and sorted;
 * the random part (6 base-36 characters) keeps processes' apart. Distinct, not secret: `Math.random` does.
 */
export function newCallId(): string {
  lastOrder = Math.max(lastOrder + 1, Date.now() * 1000);
  // An integer in base 36: a fraction's toString(36) is many times slower.
  return `${lastOrder}-${Math.floor(Math.random() * 36 ** 6)
    .toString(36)
    .padStart(6, "0")}`;
}
