/**
 * SHA-256 of a string's UTF-8 bytes (the digest API keys are stored and found by), computed by
 * @noble/hashes: audited, maintained, and synchronous, which the hot path needs (Web Crypto's
 * digest costs an event-loop turn; node:crypto's createHash builds a stream object per digest).
 * Hex is formatted from a table.
 */
import { sha256 } from "@noble/hashes/sha2.js";

const encoder = new TextEncoder();
/** Two hex digits per byte value: a table lookup is far cheaper than Number#toString(16). */
const HEX = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, "0"));

export function sha256Hex(text: string): string {
  return bytesHex(sha256(encoder.encode(text)));
}

/** Bytes as lowercase hex, two digits each. */
export function bytesHex(bytes: Uint8Array): string {
  let hex = "";
  for (const byte of bytes) hex += HEX[byte];
  return hex;
}
