/**
 * SHA-256 of a string's UTF-8 bytes (the digest API keys are stored and found by), computed by
 * @noble/hashes: audited, maintained, and synchronous, which the hot path needs (Web Crypto's
 * digest costs an event-loop turn; node:crypto's createHash builds a stream object per digest).
 * Hex is formatted from a table, and known keys are matched on the digest's words
 * (digest_map.ts), so no hex string is built on a hit.
 *
 * No digest allocates a buffer: `sha256(bytes)` makes three (the text's bytes, the hasher's
 * block, the answer), and on the metered call's path those allocations and the collections
 * they bring cost more than the hashing itself. The text is encoded into a reused buffer, and
 * one hasher is reset from a pristine one (noble's `_cloneInto`, the method behind `clone()`)
 * before each digest.
 */
import { sha256 } from "@noble/hashes/sha2.js";

const encoder = new TextEncoder();
/** Two hex digits per byte value: a table lookup is far cheaper than Number#toString(16). */
const HEX = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, "0"));
const WORDS = new Int32Array(8);
const PRISTINE = sha256.create();
const hasher = sha256.create();
const digest = new Uint8Array(32);
/** Reused for texts up to this many UTF-16 units; a longer one gets a buffer of its own. */
const REUSED_UNITS = 4096;
// UTF-8 takes at most three bytes per UTF-16 unit.
const input = new Uint8Array(REUSED_UNITS * 3);

/** The digest of `text` in a shared array: read it before the next call. */
function digestOf(text: string): Uint8Array {
  let bytes: Uint8Array;
  if (text.length <= REUSED_UNITS) {
    bytes = input.subarray(0, encoder.encodeInto(text, input).written);
  } else bytes = encoder.encode(text);
  PRISTINE._cloneInto(hasher);
  hasher.update(bytes);
  hasher.digestInto(digest);
  return digest;
}

export function sha256Hex(text: string): string {
  return bytesHex(digestOf(text));
}

/**
 * The digest of `text` as eight big-endian 32-bit words. The array is shared: it holds the
 * answer until the next call, so read or copy it first.
 */
export function sha256Words(text: string): Int32Array {
  const d = digestOf(text);
  for (let i = 0, j = 0; i < 8; i++, j += 4) {
    WORDS[i] = (d[j] << 24) | (d[j + 1] << 16) | (d[j + 2] << 8) | d[j + 3];
  }
  return WORDS;
}

/** Eight digest words as 64 lowercase hex digits. */
export function digestHex(words: Int32Array): string {
  let hex = "";
  for (let i = 0; i < 8; i++) {
    const h = words[i];
    hex += HEX[(h >>> 24) & 255] + HEX[(h >>> 16) & 255] + HEX[(h >>> 8) & 255] + HEX[h & 255];
  }
  return hex;
}

/** Bytes as lowercase hex, two digits each. */
export function bytesHex(bytes: Uint8Array): string {
  let hex = "";
  for (const byte of bytes) hex += HEX[byte];
  return hex;
}
