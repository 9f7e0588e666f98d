/**
 * Reads an upstream body up to a cap on its DECODED size (issue 13.3): fetch inflates gzip and
 * brotli as it streams, so a small compressed bomb is stopped after MAX_UPSTREAM_BYTES of
 * output, not after gigabytes. The largest Amazon page in the corpus is about 2 MB decoded.
 */
import { ApiError } from "../core/api_error.ts";

export const MAX_UPSTREAM_BYTES = 8 * 1024 * 1024;

/** A body over the cap: an uncharged 502 that the transport does not retry. */
export class BodyTooLarge extends ApiError {
  constructor(cap: number) {
    super(
      502,
      "upstream_error",
      `The marketplace sent more than ${cap / (1024 * 1024)} MiB for one page.`,
    );
  }
}

export async function readCapped(
  body: ReadableStream<Uint8Array> | null,
  cap = MAX_UPSTREAM_BYTES,
): Promise<Uint8Array> {
  if (!body) return new Uint8Array(0);
  const chunks: Uint8Array[] = [];
  let size = 0;
  const reader = body.getReader();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      size += value.length;
      if (size > cap) throw new BodyTooLarge(cap);
      chunks.push(value);
    }
  } catch (e) {
    await reader.cancel().catch(() => {});
    throw e;
  }
  if (chunks.length === 1) return chunks[0];
  const out = new Uint8Array(size);
  let at = 0;
  for (const c of chunks) {
    out.set(c, at);
    at += c.length;
  }
  return out;
}
