/**
 * A loopback stand-in for an http(s) proxy that takes credentials. Deno 2.9's fetch, given a
 * proxy with credentials, sends its `Proxy-Authorization` inside the CONNECT tunnel too, to the
 * marketplace itself: the operator's proxy account went to a third party with every request, a
 * header no browser sends there (probe DK). The runtime is given this relay instead, with no
 * credentials, and the relay adds them to the CONNECT it sends the proxy, and to nothing else.
 *
 * It tunnels only to the hosts `allowed` names (the marketplaces' on 443, an https origin's): it
 * listens on loopback, where any local program could otherwise use the operator's proxy account
 * to reach anywhere.
 */
import { closeQuietly, dialProxy, type ProxyConn } from "./proxy_dial.ts";

/** The longest CONNECT request head taken from the runtime. */
const MAX_HEAD = 16 * 1024;
/** How long the runtime has to send that head. */
const HEAD_MS = 10_000;
/**
 * Tunnels open at once, and how long one may carry nothing: each holds a connection of the
 * operator's proxy account and about 130 KB here, and 10,500 left open by a local program held
 * 1.57 GB (probe DL). The transport itself needs a few dozen (6 requests per marketplace).
 */
const MAX_TUNNELS = 256;
const IDLE_MS = 120_000;
/** How long the proxy may take to accept a connection (and its TLS handshake). */
const CONNECT_MS = 10_000;
/**
 * Connections still sending their head: counted apart, so that connections that send nothing
 * (any local program may open them) cannot take the tunnels' places (probe DO).
 */
const MAX_PENDING = 1_024;

export interface ProxyRelay {
  /** The proxy URL to give the runtime: `http://127.0.0.1:PORT`, without credentials. */
  url: string;
  close(): void;
}

/**
 * A relay for `proxyUrl` when it is an http(s) proxy with credentials; null otherwise (a SOCKS5
 * proxy's credentials stay in its own handshake, and one without credentials has none to leak).
 */
export function credentialRelay(
  proxyUrl: string,
  allowed: (host: string, port: number) => boolean,
  limits: { tunnels?: number; connectMs?: number } = {},
): ProxyRelay | null {
  const u = new URL(proxyUrl);
  if ((u.protocol !== "http:" && u.protocol !== "https:") || (!u.username && !u.password)) {
    return null;
  }
  const auth = `Basic ${base64(`${decoded(u.username)}:${decoded(u.password)}`)}`;
  const tls = u.protocol === "https:";
  const proxy = {
    hostname: u.hostname.replace(/^\[|\]$/g, ""),
    port: Number(u.port) || (tls ? 443 : 80),
  };
  let listener: Deno.Listener;
  try {
    listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  } catch (e) {
    // Deno Deploy has no listening sockets: given to the runtime, the credentials would leak.
    throw new RangeError(
      `Cannot start as an http(s) proxy with credentials needs a loopback relay here, which cannot listen (${
        (e as Error).name
      }): use a socks5:// proxy, or one that admits this host without credentials`,
    );
  }
  const open = new Set<Deno.Conn>();
  const tunnels = {
    count: 0,
    max: limits.tunnels ?? MAX_TUNNELS,
    connectMs: limits.connectMs ?? CONNECT_MS,
  };
  (async () => {
    try {
      for await (const conn of listener) {
        if (open.size >= MAX_PENDING + tunnels.max) {
          closeQuietly(conn);
          continue;
        }
        open.add(conn);
        relay(conn, proxy, tls, auth, allowed, tunnels).finally(() => open.delete(conn));
      }
    } catch { /* closed */ }
  })();
  return {
    url: `http://127.0.0.1:${(listener.addr as Deno.NetAddr).port}`,
    close() {
      closeQuietly(listener); // a second close is no error
      for (const c of open) closeQuietly(c);
    },
  };
}

async function relay(
  conn: Deno.Conn,
  proxy: { hostname: string; port: number },
  tls: boolean,
  auth: string,
  allowed: (host: string, port: number) => boolean,
  tunnels: { count: number; max: number; connectMs: number },
): Promise<void> {
  let upstream: ProxyConn | null = null;
  let counted = false;
  try {
    const head = await readHead(conn);
    const asked = head && /^CONNECT ([^\s]+) HTTP\/1\.[01]\r\n/.exec(head.text)?.[1];
    const at = asked ? hostPort(asked) : null;
    if (!head || !at || !allowed(at.host, at.port)) {
      await conn.write(encoder.encode(REFUSED)).catch(() => {});
      return;
    }
    // Rebuilt from what was checked, never passed on as written: a proxy reads
    // `evil.com?.amazon.com:443` as a host of its own (probe DL).
    const target = `${at.host}:${at.port}`;
    // A tunnel takes a place only once asked for as it should be.
    if (tunnels.count >= tunnels.max) {
      await conn.write(encoder.encode(BUSY)).catch(() => {});
      return;
    }
    tunnels.count++;
    counted = true;
    // Bounded: a proxy that takes the connection and never finishes its TLS handshake held the
    // tunnel's place for good, and 256 of them refused every tunnel after (probe DR).
    upstream = await dialProxy(
      proxy,
      tls,
      tunnels.connectMs,
      () => new Error("the proxy did not connect"),
    );
    const writer = upstream.writable.getWriter();
    await writer.write(encoder.encode(
      `CONNECT ${target} HTTP/1.1\r\nHost: ${target}\r\nProxy-Authorization: ${auth}\r\n\r\n`,
    ));
    if (head.rest.length) await writer.write(head.rest);
    writer.releaseLock();
    // The proxy's answer to the CONNECT, then the tunnel, go back as they come; a tunnel that
    // carries nothing for IDLE_MS is closed.
    const up = upstream;
    const end = () => (closeQuietly(conn), closeQuietly(up));
    let idle = setTimeout(end, IDLE_MS);
    const touched = () =>
      new TransformStream<Uint8Array, Uint8Array>({
        transform(chunk, c) {
          clearTimeout(idle);
          idle = setTimeout(end, IDLE_MS);
          c.enqueue(chunk);
        },
      });
    try {
      await Promise.race([
        conn.readable.pipeThrough(touched()).pipeTo(up.writable, { preventClose: true }),
        up.readable.pipeThrough(touched()).pipeTo(conn.writable, { preventClose: true }),
      ]);
    } finally {
      clearTimeout(idle);
    }
  } catch {
    /* either side gone: both are closed below */
  } finally {
    if (counted) tunnels.count--;
    if (upstream) closeQuietly(upstream);
    closeQuietly(conn);
  }
}

const REFUSED = "HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\nConnection: close\r\n\r\n";
const BUSY = "HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\nConnection: close\r\n\r\n";
const encoder = new TextEncoder();

/** The request head (up to its blank line) and any bytes read past it; null past the limits. */
async function readHead(conn: Deno.Conn): Promise<{ text: string; rest: Uint8Array } | null> {
  const buf = new Uint8Array(MAX_HEAD);
  let n = 0;
  const timer = setTimeout(() => closeQuietly(conn), HEAD_MS);
  try {
    while (n < buf.length) {
      const got = await conn.read(buf.subarray(n));
      if (got === null) return null;
      n += got;
      const text = new TextDecoder("latin1").decode(buf.subarray(0, n));
      const end = text.indexOf("\r\n\r\n");
      if (end >= 0) return { text: text.slice(0, end + 4), rest: buf.slice(end + 4, n) };
    }
    return null;
  } finally {
    clearTimeout(timer);
  }
}

/** `host:port` of a CONNECT target whose host is a plain name (letters, digits, dots, dashes). */
function hostPort(target: string): { host: string; port: number } | null {
  const m = /^([a-z0-9.-]{1,253}):(\d{1,5})$/i.exec(target);
  if (!m) return null;
  return { host: m[1].toLowerCase().replace(/\.$/, ""), port: Number(m[2]) };
}

function decoded(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}

function base64(text: string): string {
  return btoa(String.fromCharCode(...new TextEncoder().encode(text)));
}
