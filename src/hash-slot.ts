// Redis Cluster assigns a key to one of 16,384 slots by the CRC16 (XMODEM) of its hash tag:
// the bytes between the first "{" and the next "}", when that span is non-empty; otherwise
// the whole key. Keys that a single script touches must share a slot.

const SLOT_COUNT = 16_384;
let encoder: TextEncoder | undefined;

/**
 * The UTF-8 bytes of `text`, as Redis sees a string. The encoder is created on first use, so
 * importing the package never depends on TextEncoder being present.
 */
export function utf8(text: string): Uint8Array {
  encoder ??= new TextEncoder();
  return encoder.encode(text);
}

let crcTable: Uint16Array | undefined;

function table(): Uint16Array {
  if (crcTable) return crcTable;
  crcTable = new Uint16Array(256);
  for (let byte = 0; byte < 256; byte++) {
    let crc = byte << 8;
    for (let bit = 0; bit < 8; bit++) {
      crc = crc & 0x8000 ? ((crc << 1) ^ 0x1021) & 0xffff : (crc << 1) & 0xffff;
    }
    crcTable[byte] = crc;
  }
  return crcTable;
}

/** CRC16-XMODEM, the checksum Redis Cluster uses for key slots. */
export function crc16(bytes: Uint8Array): number {
  const lookup = table();
  let crc = 0;
  for (const byte of bytes) {
    crc = ((crc << 8) & 0xffff) ^ (lookup[((crc >> 8) ^ byte) & 0xff] as number);
  }
  return crc;
}

/** The hash tag of `key`, or undefined when the whole key is hashed. */
export function hashTag(key: string): string | undefined {
  const open = key.indexOf("{");
  if (open === -1) return undefined;
  const close = key.indexOf("}", open + 1);
  if (close === -1 || close === open + 1) return undefined;
  return key.slice(open + 1, close);
}

/** The cluster slot (0 to 16383) that `key` belongs to. */
export function hashSlot(key: string): number {
  return crc16(utf8(hashTag(key) ?? key)) % SLOT_COUNT;
}

const tagsBySlot = new Map<number, string>();

/** A short string whose own slot is `slot`, found by search once per slot and cached. */
function tagForSlot(slot: number): string {
  const cached = tagsBySlot.get(slot);
  if (cached !== undefined) return cached;
  for (let n = 0; ; n++) {
    const candidate = n.toString(36);
    if (crc16(utf8(candidate)) % SLOT_COUNT === slot) {
      tagsBySlot.set(slot, candidate);
      return candidate;
    }
  }
}

/**
 * A key derived from `key` and `suffix` that lives in the same cluster slot as `key`, so one
 * script may touch both. Distinct keys and suffixes give distinct results.
 */
export function sameSlotKey(key: string, suffix: string): string {
  if (hashTag(key) !== undefined) return `${key}${suffix}`;
  // Wrapping the key in braces makes it the hash tag, unless it contains "}" itself or is empty
  // ("{}" is no tag); such keys get a tag found by search that hashes to the same slot, followed
  // by the key to stay unique.
  if (key !== "" && !key.includes("}")) return `{${key}}${suffix}`;
  return `{${tagForSlot(hashSlot(key))}}${key}${suffix}`;
}
