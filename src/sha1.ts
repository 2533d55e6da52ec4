// SHA-1 (FIPS 180-4), synchronous. The lock hashes what Redis's `redis.sha1hex` hashes in its
// scripts (the key, for the event channel; a token, which a fair release names): both sides must
// agree. Web Crypto's digest would do, but it is asynchronous (a thread-pool hop in Node, which costs
// a fair waiter up to a millisecond after an idle spell) and missing in some runtimes. The inputs
// are short, so a plain implementation takes microseconds. Not for security: SHA-1 only names things.

import { utf8 } from "./hash-slot";

/** The SHA-1 of `text`'s UTF-8 bytes, in lowercase hex, as `redis.sha1hex(text)` returns it. */
export function sha1Hex(text: string): string {
  const words = paddedWords(utf8(text));
  const state = [0x67452301, 0xefcdab89, 0x98badcfe, 0x10325476, 0xc3d2e1f0];
  const schedule = new Uint32Array(80);
  for (let block = 0; block < words.length; block += 16) compress(state, words, block, schedule);
  return state.map((word) => (word >>> 0).toString(16).padStart(8, "0")).join("");
}

/** The message as big-endian 32-bit words: the bytes, a 1 bit, zeros, and the length in bits. */
function paddedWords(bytes: Uint8Array): Uint32Array {
  const blocks = Math.ceil((bytes.length + 9) / 64);
  const words = new Uint32Array(blocks * 16);
  const put = (index: number, byte: number) => {
    words[index >> 2] = (words[index >> 2] as number) | (byte << (24 - (index % 4) * 8));
  };
  for (let index = 0; index < bytes.length; index++) put(index, bytes[index] as number);
  put(bytes.length, 0x80);
  const bits = bytes.length * 8;
  // The length is a 64-bit count of bits: the high word only matters past 512 MiB.
  words[words.length - 2] = Math.floor(bits / 0x100000000);
  words[words.length - 1] = bits >>> 0;
  return words;
}

function rotateLeft(word: number, by: number): number {
  return (word << by) | (word >>> (32 - by));
}

/** Mixes one 64-byte block (`words[block..block+15]`) into `state`. */
function compress(state: number[], words: Uint32Array, block: number, schedule: Uint32Array): void {
  for (let t = 0; t < 16; t++) schedule[t] = words[block + t] as number;
  for (let t = 16; t < 80; t++) {
    const mixed =
      (schedule[t - 3] as number) ^
      (schedule[t - 8] as number) ^
      (schedule[t - 14] as number) ^
      (schedule[t - 16] as number);
    schedule[t] = rotateLeft(mixed, 1);
  }
  let [a, b, c, d, e] = state as [number, number, number, number, number];
  for (let t = 0; t < 80; t++) {
    let mix: number;
    let constant: number;
    if (t < 20) {
      mix = (b & c) | (~b & d);
      constant = 0x5a827999;
    } else if (t < 40) {
      mix = b ^ c ^ d;
      constant = 0x6ed9eba1;
    } else if (t < 60) {
      mix = (b & c) | (b & d) | (c & d);
      constant = 0x8f1bbcdc;
    } else {
      mix = b ^ c ^ d;
      constant = 0xca62c1d6;
    }
    const next = (rotateLeft(a, 5) + mix + e + constant + (schedule[t] as number)) | 0;
    e = d;
    d = c;
    c = rotateLeft(b, 30);
    b = a;
    a = next;
  }
  state[0] = ((state[0] as number) + a) | 0;
  state[1] = ((state[1] as number) + b) | 0;
  state[2] = ((state[2] as number) + c) | 0;
  state[3] = ((state[3] as number) + d) | 0;
  state[4] = ((state[4] as number) + e) | 0;
}
