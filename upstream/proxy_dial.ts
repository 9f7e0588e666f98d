/**
 * The relay's connection to the operator's proxy (upstream/proxy_relay.ts), plain TCP or TLS,
 * within a deadline, and let go of at once when the deadline passes.
 *
 * TLS goes through node:tls rather than `Deno.connectTls`: a Deno TLS connection closed before its
 * handshake is done keeps its socket open until the peer closes it (Deno 2.9), so every tunnel
 * asked of an https proxy that takes the connection and never speaks TLS kept a descriptor, until
 * the process ran out of them (probe HT). node's `destroy()` closes the socket at once. Both trust
 * the same certificates (the system's, and DENO_CERT's).
 */
import { connect as tlsConnect } from "node:tls";
import { Duplex } from "node:stream";
import { within } from "../core/within.ts";

/** What a tunnel needs of its connection to the proxy. */
export interface ProxyConn {
  readable: ReadableStream<Uint8Array>;
  writable: WritableStream<Uint8Array>;
  close(): void;
}

/**
 * A connection to `proxy`, its TLS handshake done when `tls`; rejects with `late()`'s error past
 * `ms`, the connection then closed (one still connecting is closed once it connects).
 */
export async function dialProxy(
  proxy: { hostname: string; port: number },
  tls: boolean,
  ms: number,
  late: () => Error,
): Promise<ProxyConn> {
  const dial = tls ? dialTls(proxy) : dialTcp(proxy);
  try {
    return await within(dial.ready, ms, late);
  } catch (e) {
    dial.abandon();
    throw e;
  }
}

interface Dial {
  ready: Promise<ProxyConn>;
  abandon(): void;
}

function dialTcp(proxy: { hostname: string; port: number }): Dial {
  const ready = Deno.connect(proxy);
  return {
    ready,
    abandon: () => void ready.then((c) => closeQuietly(c), () => {}),
  };
}

function dialTls(proxy: { hostname: string; port: number }): Dial {
  const socket = tlsConnect({ host: proxy.hostname, port: proxy.port });
  // Listened to for as long as the socket lives: an error event nobody listens to is thrown, and
  // ends the process. The tunnel learns of the error from its streams.
  socket.on("error", () => {});
  const ready = new Promise<ProxyConn>((resolve, reject) => {
    socket.once("secureConnect", () => {
      const { readable, writable } = Duplex.toWeb(socket) as unknown as {
        readable: ReadableStream<Uint8Array>;
        writable: WritableStream<Uint8Array>;
      };
      resolve({ readable, writable, close: () => void socket.destroy() });
    });
    socket.once("error", reject);
    socket.once("close", () => reject(new Error("the proxy closed the connection")));
  });
  return { ready, abandon: () => void socket.destroy() };
}

export function closeQuietly(c: { close(): void }): void {
  try {
    c.close();
  } catch { /* closed already */ }
}
