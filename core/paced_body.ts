/**
 * Large response bodies handed to the server a chunk at a time, as the client takes them.
 *
 * Given as one buffer (or string), a body is copied whole into each response, and the copy stays
 * until the client has read it. Deno.serve also speaks cleartext HTTP/2, where one connection
 * carries 200 requests at once and a client may keep its flow-control window shut: 15 such
 * connections asking for the 1.7 MB docs bundle, without a key, held 5.2 GB, with no timeout to
 * free it (probe T). Paced, a stalled request holds only the few chunks the server reads ahead:
 * 1,000 stalled streams of that bundle held 100 MB instead of 1.7 GB. Small bodies go as they are;
 * their copy is no bigger than the chunks read ahead.
 */

/** Bodies longer than this (bytes) are paced. */
export const PACED_FROM = 64 * 1024;
const CHUNK = 16 * 1024;

/**
 * `bytes` as a body: itself when small, else a stream of views over it (not copies: the same
 * bytes serve every response, so they must not change after).
 */
export function pacedBody(
  bytes: Uint8Array<ArrayBuffer>,
): Uint8Array<ArrayBuffer> | ReadableStream<Uint8Array<ArrayBuffer>> {
  if (bytes.length <= PACED_FROM) return bytes;
  let at = 0;
  // A default stream, not a byte stream: a byte stream's enqueue transfers (detaches) the
  // buffer under a view, which is shared.
  return new ReadableStream<Uint8Array<ArrayBuffer>>({
    pull(controller) {
      if (at >= bytes.length) return controller.close();
      controller.enqueue(bytes.subarray(at, at + CHUNK));
      at += CHUNK;
    },
  }, { highWaterMark: 0 });
}

const encoder = new TextEncoder();

/** Text as a body: encoded and paced when long. */
export function pacedText(
  text: string,
): string | Uint8Array<ArrayBuffer> | ReadableStream<Uint8Array<ArrayBuffer>> {
  // A UTF-8 text is at least as long in bytes as in UTF-16 units, and at most three times.
  if (text.length <= PACED_FROM / 3) return text;
  return pacedBody(encoder.encode(text)); // encoded here, so not again by the server
}
