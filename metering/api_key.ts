/**
 * API key values: `shelf_live_` or `shelf_test_` + 48 lowercase hex (24 random bytes).
 * Only the SHA-256 digest, the prefix and the last four characters are ever stored.
 */
import { bytesHex, sha256Hex } from "./sha256.ts";

export type KeyMode = "live" | "test";
export const KEY_PATTERN = /^shelf_(live|test)_[0-9a-f]{48}$/;

export function generateKey(mode: KeyMode): string {
  return `shelf_${mode}_${randomHex(24)}`;
}

/** The SHA-256 digest (hex) under which a key, session token or cache key is stored. */
export function hashKey(value: string): string {
  return sha256Hex(value);
}

/** What is shown of a key after creation: "shelf_live_1a2b" and "9f0e". */
export function keyDisplayParts(value: string): { prefix: string; last4: string } {
  return { prefix: value.slice(0, 15), last4: value.slice(-4) };
}

export function randomHex(bytes: number): string {
  return bytesHex(crypto.getRandomValues(new Uint8Array(bytes)));
}
