// A Redis Cluster key's slot (of 16,384) is the CRC16 (XMODEM) of its hash tag, the bytes between the first
// "{" and the next "}" when not empty, else of the whole key. Keys one script touches must share a slot.

let encoder: TextEncoder | undefined;

/** CRC16-XMODEM of `text`'s UTF-8 bytes, the checksum Redis Cluster uses for slots. */
export function crc16(text: string): number {
  encoder ??= new TextEncoder(); // created on first use: importing never depends on TextEncoder
  let crc = 0;
  for (const byte of encoder.encode(text)) {
    crc ^= byte << 8;
    for (let bit = 0; bit < 8; bit++)
      crc = crc & 0x8000 ? ((crc << 1) ^ 0x1021) & 0xffff : (crc << 1) & 0xffff;
  }
  return crc;
}

/** The hash tag of `key`, or undefined when the whole key is hashed. */
export function hashTag(key: string): string | undefined {
  const open = key.indexOf("{");
  const close = open === -1 ? -1 : key.indexOf("}", open + 1);
  return close > open + 1 ? key.slice(open + 1, close) : undefined;
}

/** The cluster slot (0 to 16383) that `key` belongs to. */
export function hashSlot(key: string): number {
  return crc16(hashTag(key) ?? key) % 16_384;
}

const tags = new Map<number, string>();

/** A short string without braces whose own slot is `slot`, found by search once per slot. */
export function tagForSlot(slot: number): string {
  let tag = tags.get(slot);
  for (let n = 0; tag === undefined; n++) if (crc16(n.toString(36)) % 16_384 === slot) tag = n.toString(36);
  tags.set(slot, tag);
  return tag;
}
