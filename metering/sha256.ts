/**
 * SHA-256 of a string's UTF-8 bytes, as lowercase hex, in plain JavaScript.
 *
 * Every API call hashes the key it presents. node:crypto's createHash builds a stream object and
 * makes three runtime calls per digest, and on Deno.serve's hot path that cost a fifth of the
 * gateway's throughput; Web Crypto's digest is asynchronous, which costs an event-loop turn. A key
 * is one or two 64-byte blocks, which this computes in about a microsecond.
 */

const K = new Int32Array([
  0x428a2f98,
  0x71374491,
  0xb5c0fbcf,
  0xe9b5dba5,
  0x3956c25b,
  0x59f111f1,
  0x923f82a4,
  0xab1c5ed5,
  0xd807aa98,
  0x12835b01,
  0x243185be,
  0x550c7dc3,
  0x72be5d74,
  0x80deb1fe,
  0x9bdc06a7,
  0xc19bf174,
  0xe49b69c1,
  0xefbe4786,
  0x0fc19dc6,
  0x240ca1cc,
  0x2de92c6f,
  0x4a7484aa,
  0x5cb0a9dc,
  0x76f988da,
  0x983e5152,
  0xa831c66d,
  0xb00327c8,
  0xbf597fc7,
  0xc6e00bf3,
  0xd5a79147,
  0x06ca6351,
  0x14292967,
  0x27b70a85,
  0x2e1b2138,
  0x4d2c6dfc,
  0x53380d13,
  0x650a7354,
  0x766a0abb,
  0x81c2c92e,
  0x92722c85,
  0xa2bfe8a1,
  0xa81a664b,
  0xc24b8b70,
  0xc76c51a3,
  0xd192e819,
  0xd6990624,
  0xf40e3585,
  0x106aa070,
  0x19a4c116,
  0x1e376c08,
  0x2748774c,
  0x34b0bcb5,
  0x391c0cb3,
  0x4ed8aa4a,
  0x5b9cca4f,
  0x682e6ff3,
  0x748f82ee,
  0x78a5636f,
  0x84c87814,
  0x8cc70208,
  0x90befffa,
  0xa4506ceb,
  0xbef9a3f7,
  0xc67178f2,
]);
const H0 = new Int32Array([
  0x6a09e667,
  0xbb67ae85,
  0x3c6ef372,
  0xa54ff53a,
  0x510e527f,
  0x9b05688c,
  0x1f83d9ab,
  0x5be0cd19,
]);

// Reused between calls: one digest at a time on a JavaScript thread.
const W = new Int32Array(64);
const H = new Int32Array(8);
let buffer = new Uint8Array(256);
const encoder = new TextEncoder();
/** Two hex digits per byte value: a table lookup is far cheaper than Number#toString(16). */
const HEX = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, "0"));

export function sha256Hex(text: string): string {
  return digestHex(sha256Words(text));
}

/**
 * The digest of `text` as eight big-endian 32-bit words. The array is shared: it holds the
 * answer until the next call, so read or copy it first.
 */
export function sha256Words(text: string): Int32Array {
  const length = writeUtf8(text);
  const total = (length + 9 + 63) & ~63;
  const b = buffer;
  b.fill(0, length, total);
  b[length] = 0x80;
  // The message length in bits, big-endian in the last 8 bytes (writeUtf8 caps it below 2^53).
  const high = Math.floor(length / 0x20000000);
  const low = (length << 3) >>> 0;
  b[total - 8] = high >>> 24;
  b[total - 7] = high >>> 16;
  b[total - 6] = high >>> 8;
  b[total - 5] = high;
  b[total - 4] = low >>> 24;
  b[total - 3] = low >>> 16;
  b[total - 2] = low >>> 8;
  b[total - 1] = low;
  H.set(H0);
  for (let at = 0; at < total; at += 64) compress(b, at);
  return H;
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

/** Writes `text` as UTF-8 at the start of `buffer` (grown to fit it and its padding); its length. */
function writeUtf8(text: string): number {
  if (buffer.length < text.length * 3 + 72) buffer = new Uint8Array(text.length * 3 + 72);
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c >= 0x80) return encoder.encodeInto(text, buffer).written;
    buffer[i] = c;
  }
  return text.length;
}

function compress(m: Uint8Array, at: number): void {
  for (let t = 0, i = at; t < 16; t++, i += 4) {
    W[t] = (m[i] << 24) | (m[i + 1] << 16) | (m[i + 2] << 8) | m[i + 3];
  }
  for (let t = 16; t < 64; t++) {
    const w15 = W[t - 15];
    const w2 = W[t - 2];
    const s0 = ((w15 >>> 7) | (w15 << 25)) ^ ((w15 >>> 18) | (w15 << 14)) ^ (w15 >>> 3);
    const s1 = ((w2 >>> 17) | (w2 << 15)) ^ ((w2 >>> 19) | (w2 << 13)) ^ (w2 >>> 10);
    W[t] = (W[t - 16] + s0 + W[t - 7] + s1) | 0;
  }
  let a = H[0], b = H[1], c = H[2], d = H[3], e = H[4], f = H[5], g = H[6], h = H[7];
  for (let t = 0; t < 64; t++) {
    const S1 = ((e >>> 6) | (e << 26)) ^ ((e >>> 11) | (e << 21)) ^ ((e >>> 25) | (e << 7));
    const ch = (e & f) ^ (~e & g);
    const t1 = (h + S1 + ch + K[t] + W[t]) | 0;
    const S0 = ((a >>> 2) | (a << 30)) ^ ((a >>> 13) | (a << 19)) ^ ((a >>> 22) | (a << 10));
    const maj = (a & b) ^ (a & c) ^ (b & c);
    const t2 = (S0 + maj) | 0;
    h = g;
    g = f;
    f = e;
    e = (d + t1) | 0;
    d = c;
    c = b;
    b = a;
    a = (t1 + t2) | 0;
  }
  H[0] += a;
  H[1] += b;
  H[2] += c;
  H[3] += d;
  H[4] += e;
  H[5] += f;
  H[6] += g;
  H[7] += h;
}
