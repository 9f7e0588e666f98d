/**
 * A stand-in for an operator's proxy that takes TCP connections and never answers them (no TLS,
 * no HTTP): what the credential relay meets when the proxy hangs. It reads and drops what it is
 * sent, and `closedByUs` tells, for each connection in turn, when the relay's side closed it.
 */
export function muteProxy() {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const held: Deno.Conn[] = [];
  const closedByUs: Promise<void>[] = [];
  const accepting = (async () => {
    for await (const c of listener) {
      held.push(c);
      closedByUs.push((async () => {
        const buf = new Uint8Array(4096);
        while ((await c.read(buf).catch(() => null)) !== null) { /* a ClientHello, unanswered */ }
      })());
    }
  })().catch(() => {});
  return {
    port: listener.addr.port,
    held,
    closedByUs,
    async [Symbol.asyncDispose]() {
      listener.close();
      await accepting;
      for (const c of held) {
        try {
          c.close();
        } catch { /* closed */ }
      }
      await Promise.all(closedByUs);
    },
  };
}

/**
 * Asks the relay at `relayUrl` for a tunnel to the marketplace and reads its first answer: the
 * text it sent before closing, "" when it closed without a word.
 */
export async function askTunnel(relayUrl: string): Promise<string> {
  const c = await Deno.connect({ hostname: "127.0.0.1", port: Number(new URL(relayUrl).port) });
  try {
    await c.write(new TextEncoder().encode("CONNECT www.amazon.com:443 HTTP/1.1\r\n\r\n"));
    const buf = new Uint8Array(256);
    const n = await c.read(buf).catch(() => null);
    return new TextDecoder().decode(buf.subarray(0, n ?? 0));
  } finally {
    c.close();
  }
}
