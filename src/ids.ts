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

/** This process's µs clock, strictly increasing: its ids stay distinct though the wall clock steps back. */
function nextOrder(): number {
  lastOrder = Math.max(lastOrder + 1, Date.now() * 1000);
  return lastOrder;
}

/**
 * Moves this process's order past `order` (µs), a request id's that Redis named: ids made from now on come
 * after it, though its sender's clock ran ahead of this one's (a Lamport step).
 */
export function orderAfter(order: number): void {
  lastOrder = Math.max(lastOrder, order);
}

/** 6 base-36 characters: processes' ids apart. Distinct, not secret: `Math.random` does. */
function randomPart(): string {
  // An integer in base 36: a fraction's toString(36) is many times slower.
  return Math.floor(Math.random() * 36 ** 6)
    .toString(36)
    .padStart(6, "0");
}

/**
 * A fresh id per request (an acquire try, a release, an extend): `<order>-<random>`, spaceless (scripts keep
 * lists of them, and find them by equality only). The order is the µs clock in base 36 (10 characters until
 * 2084, against 16 in decimal): every request carries one or two, and no request may weigh more than 0.2's.
 */
export function newCallId(): string {
  return `${nextOrder().toString(36)}-${randomPart()}`;
}

let lastTime = 0;

/**
 * As {@link newCallId}, with the order in decimal µs: Debounce's script reads it as the call's time, so it
 * keeps an order of its own, on this process's clock (`orderAfter` moves a lock's past another's clock).
 */
export function newTimedCallId(): string {
  lastTime = Math.max(lastTime + 1, Date.now() * 1000);
  return `${lastTime}-${randomPart()}`;
}
