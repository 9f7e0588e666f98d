/**
 * An archived HTTP body as fetch would give it: de-chunked and decompressed, never past `max`
 * bytes at any step. warcio decodes a body by reading a whole chunk (up to 4 GiB) before
 * inflating it in one step, so a 12 KB record of gzip in one chunk took 4.4 GB and froze the
 * server for 24 s (probe EG); here the raw body is read no further than `max`, de-chunked by hand
 * and inflated with an output limit.
 */
import zlib from "node:zlib";

export type Decoded = { body: Uint8Array } | { unusable: string };

/** `raw`, the body as recorded, decoded per its `Transfer-Encoding` and `Content-Encoding`. */
export async function decodeBody(
  raw: Uint8Array,
  transferEncoding: string | undefined,
  contentEncoding: string | undefined,
  max: number,
): Promise<Decoded> {
  const te = (transferEncoding ?? "").trim().toLowerCase();
  let ce = (contentEncoding ?? "").trim().toLowerCase();
  let body = raw;
  if (te.split(",").map((t) => t.trim()).includes("chunked")) {
    const whole = dechunk(raw);
    if (!whole) return { unusable: "holds a chunked body cut short or malformed" };
    body = whole;
  } else if (!ce && te && te !== "identity") {
    ce = te; // as warcio and browsers read a body's encoding named there
  }
  if (!ce || ce === "identity" || body.length === 0) return { body };
  // Stored already decoded with the header kept, as some recorders do and warcio takes it: a
  // body named gzip without gzip's first bytes, or one that fails to decode and reads as text.
  if ((ce === "gzip" || ce === "x-gzip") && !(body[0] === 0x1f && body[1] === 0x8b)) {
    return { body };
  }
  const inflate = DECODERS[ce];
  if (!inflate) return { unusable: `is encoded as ${ce.slice(0, 40)}, which is not read` };
  const failed = { unusable: `holds a ${ce} body cut short or malformed` };
  let out: Uint8Array;
  try {
    out = new Uint8Array(inflate(body, { maxOutputLength: max }));
  } catch (e) {
    if (e instanceof RangeError) {
      return { unusable: `is larger than the ${max >> 20} MiB any page may be` };
    }
    return looksLikeText(body) ? { body } : failed;
  }
  if (ce === "br" && !(await wholeBrotli(body))) return looksLikeText(body) ? { body } : failed;
  return { body: out };
}

/**
 * Whether a brotli stream ends as a whole one: the runtime's brotli gives what it decoded of a
 * stream cut short without a word (probe EI: half a page served, charged), the web stream refuses
 * one. Asked only once the stream's output is known to be within the limit, as the web stream
 * inflates all it is given at once.
 */
async function wholeBrotli(body: Uint8Array): Promise<boolean> {
  try {
    const stream = new Blob([body as Uint8Array<ArrayBuffer>]).stream()
      .pipeThrough(new DecompressionStream("brotli" as CompressionFormat));
    await new Response(stream).arrayBuffer();
    return true;
  } catch {
    return false;
  }
}

/**
 * A page's text rather than a compressed stream: a UTF-16 byte-order mark, `<` after a UTF-8 one
 * and white space (real pages begin with 300 bytes of it, or with `<script`, `<div`; probe EK),
 * or a start without the control bytes a compressed stream is full of (a saved page beginning
 * with a comment line).
 */
function looksLikeText(b: Uint8Array): boolean {
  if ((b[0] === 0xff && b[1] === 0xfe) || (b[0] === 0xfe && b[1] === 0xff)) return true;
  let i = b[0] === 0xef && b[1] === 0xbb && b[2] === 0xbf ? 3 : 0;
  while (i < b.length && i < 4096 && (b[i] === 32 || (b[i] >= 9 && b[i] <= 13))) i++;
  if (b[i] === 60) return true;
  const head = b.subarray(i, i + 256);
  return head.length > 0 &&
    head.every((c) => c >= 32 ? c !== 127 : c === 9 || c === 10 || c === 13);
}

type Inflate = (b: Uint8Array, o: { maxOutputLength: number }) => Uint8Array;

const DECODERS: Record<string, Inflate> = {
  gzip: zlib.gunzipSync,
  "x-gzip": zlib.gunzipSync,
  // A body named deflate is zlib-wrapped by the standard, raw in some servers' hands.
  deflate: (b, o) => {
    try {
      return zlib.inflateSync(b, o);
    } catch (e) {
      if (e instanceof RangeError) throw e;
      return zlib.inflateRawSync(b, o);
    }
  },
  br: zlib.brotliDecompressSync,
};

/**
 * A chunked body's data, trailer fields left out; null when it is cut short or malformed. A body
 * that does not begin with a chunk size is taken as already de-chunked, as warcio takes it: some
 * recorders store the data and keep the header. One pass, each chunk copied once into the output:
 * a piece kept per chunk, 1.4 million one-byte chunks took 850 ms and 238 MiB (probe EI).
 */
export function dechunk(b: Uint8Array): Uint8Array | null {
  const out = new Uint8Array(b.length);
  let size = 0;
  let at = 0;
  for (let first = true;; first = false) {
    // The size: hex digits, then an extension after ";", or white space, up to CRLF.
    let n = 0;
    let digits = 0;
    let i = at;
    for (; i < b.length && digits <= 8; i++) {
      const v = hexValue(b[i]);
      if (v < 0) break;
      n = n * 16 + v;
      digits++;
    }
    const eol = digits > 0 && digits <= 8 ? lineEnd(b, i, at + 1024) : -1;
    if (eol < 0) return first ? b : null;
    at = eol + 2;
    if (n === 0) break; // the last chunk; what follows is trailer fields
    if (at + n + 2 > b.length || b[at + n] !== 13 || b[at + n + 1] !== 10) return null;
    out.set(b.subarray(at, at + n), size);
    size += n;
    at += n + 2;
  }
  return out.subarray(0, size);
}

/** 0–15 for a hex digit's byte, else -1. */
function hexValue(c: number): number {
  if (c >= 48 && c <= 57) return c - 48;
  if (c >= 97 && c <= 102) return c - 87;
  if (c >= 65 && c <= 70) return c - 55;
  return -1;
}

/**
 * Where the size line ending at or after `from` has its CRLF, the rest of the line being an
 * extension (";…") or white space, within `limit`; -1 when it has none.
 */
function lineEnd(b: Uint8Array, from: number, limit: number): number {
  const c = b[from];
  if (c !== 13 && c !== 59 && c !== 32 && c !== 9) return -1;
  for (let i = from; i + 1 < b.length && i < limit; i++) {
    if (b[i] === 13) return b[i + 1] === 10 ? i : -1;
  }
  return -1;
}
