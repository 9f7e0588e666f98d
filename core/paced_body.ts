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
 * A paced body the server takes no chunk of for this long lets go of its text: each answer waiting
 * for a client that never reads held all of it, 200 such clients of 7 MB answers 2.6 GB, and
 * nothing let go of them (probe CW). The connection stays until the client goes, holding one
 * chunk; a client that reads again after that meets the body's end, short of the Content-Length
 * the answer carries, which tells it the body was cut (the server then closes an HTTP/1.1
 * connection). The stream ends, not errs: the runtime writes a stack trace to stderr for every
 * body that errs, `--quiet` or not, and one HTTP/2 connection with 200 such streams wrote 124 KB
 * of them; with a stderr reader that stalled, that froze the server (probe DD).
 *
 * The server takes a chunk only once the socket's send buffer (up to 4 MB) has half drained, so a
 * client that reads steadily at 32 KB/s waits 35–38 s between takes: 30 s cut such clients off
 * (probe CX). Five minutes cuts only a client slower than about 7 KB/s, or one that stopped.
 */
export const PACED_IDLE_MS = 300_000;

/**
 * `bytes` as a body: itself when small, else a stream of chunks copied from it as the client takes
 * them (a view would keep all of `bytes` alive for as long as the server holds the chunk). The
 * same bytes may serve every response: they must not change after.
 */
export function pacedBody(
  bytes: Uint8Array<ArrayBuffer>,
  idleMs = PACED_IDLE_MS,
): Uint8Array<ArrayBuffer> | ReadableStream<Uint8Array<ArrayBuffer>> {
  if (bytes.length <= PACED_FROM) return bytes;
  let source: Uint8Array<ArrayBuffer> | null = bytes;
  let at = 0;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const stop = () => {
    clearTimeout(timer);
    source = null; // the text goes with the response, not with the stream's last reference
  };
  // A default stream, not a byte stream: a byte stream's enqueue transfers (detaches) the
  // buffer under a view, which is shared.
  const length = bytes.length;
  return new ReadableStream<Uint8Array<ArrayBuffer>>({
    start() {
      timer = setTimeout(stop, idleMs);
    },
    pull(controller) {
      clearTimeout(timer);
      if (at >= length) return controller.close();
      if (!source) return controller.close();
      controller.enqueue(source.slice(at, at + CHUNK));
      at += CHUNK;
      timer = setTimeout(stop, idleMs);
    },
    cancel: stop,
  }, { highWaterMark: 0 });
}

const encoder = new TextEncoder();

/**
 * A response of `bytes`, paced when long, with its Content-Length then: a paced body goes out
 * chunked otherwise, and one cut short (see PACED_IDLE_MS) ended like a whole one for an HTTP/1.0
 * client (probe CX).
 */
export function pacedResponse(
  bytes: Uint8Array<ArrayBuffer>,
  headers: Record<string, string>,
): Response {
  const body = pacedBody(bytes);
  if (body === bytes) return new Response(body, { headers });
  return new Response(body, { headers: { ...headers, "content-length": String(bytes.length) } });
}

/** A response of text, encoded and paced when long (see pacedResponse). */
export function pacedTextResponse(text: string, headers: Record<string, string>): Response {
  // A UTF-8 text is at least as long in bytes as in UTF-16 units, and at most three times.
  if (text.length <= PACED_FROM / 3) return new Response(text, { headers });
  return pacedResponse(encoder.encode(text), headers); // encoded here, so not again by the server
}
