/**
 * The `Shelf-Signature` header of a webhook event, Stripe-style: `t=<unix seconds>,v1=<hex>`,
 * where v1 is HMAC-SHA256 of "<t>.<body>" keyed with the watch's secret. Signing the time with
 * the body lets a receiver reject a replayed event by its age as well as a forged one.
 */
import { hmac } from "@noble/hashes/hmac.js";
import { sha256 } from "@noble/hashes/sha2.js";
import { bytesToHex } from "@noble/hashes/utils.js";

const encoder = new TextEncoder();

export function signatureHeader(secret: string, body: string, unixSeconds: number): string {
  const mac = hmac(sha256, encoder.encode(secret), encoder.encode(`${unixSeconds}.${body}`));
  return `t=${unixSeconds},v1=${bytesToHex(mac)}`;
}

/** A new watch secret: 32 random bytes, hex, with a prefix that says what it is. */
export function newWatchSecret(): string {
  return `whsec_${bytesToHex(crypto.getRandomValues(new Uint8Array(32)))}`;
}
