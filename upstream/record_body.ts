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
export function decodeBody(
  raw: Uint8Array,
  transferEncoding: string | undefined,
  contentEncoding: string | undefined,
  max: number,
): Decoded {
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
  // Not gzip at all: stored already decoded with the header kept, as warcio takes it.
  if ((ce === "gzip" || ce === "x-gzip") && !(body[0] === 0x1f && body[1] === 0x8b)) {
    return { body };
  }
  const inflate = DECODERS[ce];
  if (!inflate) return { unusable: `is encoded as ${ce.slice(0, 40)}, which is not read` };
  try {
    return { body: new Uint8Array(inflate(body, { maxOutputLength: max })) };
  } catch (e) {
    return e instanceof RangeError
      ? { unusable: `is larger than the ${max >> 20} MiB any page may be` }
      : { unusable: `holds a ${ce} body cut short or malformed` };
  }
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
 * recorders store the data and keep the header.
 */
export function dechunk(b: Uint8Array): Uint8Array | null {
  const parts: Uint8Array[] = [];
  let size = 0;
  let at = 0;
  for (;;) {
    const eol = crlfAt(b, at);
    if (eol < 0) return at === 0 ? b : null;
    const line = String.fromCharCode(...b.subarray(at, Math.min(eol, at + 64))).split(";")[0]
      .trim();
    if (eol - at > 64 || !/^[0-9a-f]{1,8}$/i.test(line)) return at === 0 ? b : null;
    const n = parseInt(line, 16);
    at = eol + 2;
    if (n === 0) break; // the last chunk; what follows is trailer fields
    if (at + n + 2 > b.length || b[at + n] !== 13 || b[at + n + 1] !== 10) return null;
    parts.push(b.subarray(at, at + n));
    size += n;
    at += n + 2;
  }
  const out = new Uint8Array(size);
  let o = 0;
  for (const p of parts) {
    out.set(p, o);
    o += p.length;
  }
  return out;
}

function crlfAt(b: Uint8Array, from: number): number {
  for (let i = b.indexOf(13, from); i >= 0 && i + 1 < b.length; i = b.indexOf(13, i + 1)) {
    if (b[i + 1] === 10) return i;
  }
  return -1;
}
