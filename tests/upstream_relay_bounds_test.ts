/**
 * The credential relay (upstream/proxy_relay.ts) faces any local program on loopback and the
 * operator's proxy on the other side, so its parsing is strict and every resource it holds is
 * bounded (probe HT found these unpinned): only a request line that is a CONNECT to a plain
 * host:port opens a tunnel; credentials go on the CONNECT as UTF-8 Basic, a user name alone
 * included; tunnels are capped, freed when either side ends or the relay closes, and closed when
 * idle; a head that never ends and a proxy that never connects are each given up on in time.
 *
 * Real sockets on loopback throughout; the proxy is a stand-in that answers every CONNECT with
 * 200 and records what it is sent. The 10 s and 120 s bounds are not waited out: those tests
 * shorten the relay's long timers by wrapping globalThis.setTimeout for their duration.
 */
import assert from "node:assert/strict";
import { credentialRelay, type ProxyRelay } from "../upstream/proxy_relay.ts";
import { muteProxy } from "./mute_proxy.ts";

const enc = new TextEncoder();
const dec = new TextDecoder();
/** Taken before any test wraps it, so the tests' own waits are never shortened. */
const realSetTimeout = globalThis.setTimeout;

const wait = (ms: number) => new Promise<void>((r) => realSetTimeout(r, ms));

/** Polls `cond` until it holds or `ms` pass; returns whether it held. */
async function until(cond: () => boolean, ms = 5_000): Promise<boolean> {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) return false;
    await wait(10);
  }
  return true;
}

/** `p`'s value, or `fallback` once `ms` have passed first. */
async function orAfter<T, F>(p: Promise<T>, ms: number, fallback: F): Promise<T | F> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  try {
    return await Promise.race([
      p,
      new Promise<F>((r) => timer = realSetTimeout(() => r(fallback), ms)),
    ]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Runs `body` with the timers of `ms` at least `from` shortened `by` times (the relay reads
 * setTimeout from the global scope at each call), then puts the real one back.
 */
async function withShortTimers<T>(from: number, by: number, body: () => Promise<T>): Promise<T> {
  const scaled =
    ((f: () => void, ms?: number) =>
      realSetTimeout(f, ms !== undefined && ms >= from ? ms / by : ms)) as typeof setTimeout;
  globalThis.setTimeout = scaled;
  try {
    return await body();
  } finally {
    globalThis.setTimeout = realSetTimeout;
  }
}

interface ProxySide {
  /** The CONNECT head the proxy was sent. */
  head: string;
  /** What came after the head, through the tunnel. */
  after: string;
  /** The relay closed its connection to the proxy. */
  eof: boolean;
}

/** A proxy that answers each CONNECT with 200 and then holds the tunnel, recording its traffic. */
function holdingProxy() {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const sides: ProxySide[] = [];
  const conns: Deno.Conn[] = [];
  const loops: Promise<void>[] = [];
  const serve = async (c: Deno.Conn, side: ProxySide) => {
    const buf = new Uint8Array(8192);
    let text = "";
    for (;;) {
      const n = await c.read(buf).catch(() => null);
      if (n === null) {
        side.eof = true;
        return;
      }
      text += dec.decode(buf.subarray(0, n));
      if (!side.head) {
        const end = text.indexOf("\r\n\r\n");
        if (end < 0) continue;
        side.head = text.slice(0, end + 4);
        await c.write(enc.encode("HTTP/1.1 200 Connection established\r\n\r\n")).catch(() => {});
      }
      side.after = text.slice(side.head.length);
    }
  };
  const accepting = (async () => {
    for await (const c of listener) {
      const side = { head: "", after: "", eof: false };
      sides.push(side);
      conns.push(c);
      loops.push(serve(c, side));
    }
  })().catch(() => {});
  return {
    sides,
    port: listener.addr.port,
    async close() {
      listener.close();
      for (const c of conns) {
        try {
          c.close();
        } catch { /* closed */ }
      }
      await accepting;
      await Promise.all(loops);
    },
  };
}

/** A client of the relay that has sent `raw`, and the status line it was answered (or ""). */
/** A relay with credentials in front of a holding proxy, for `use`; both closed after it. */
async function withRelay(
  limits: { tunnels?: number },
  use: (relay: ProxyRelay, proxy: ReturnType<typeof holdingProxy>) => Promise<void>,
): Promise<void> {
  const proxy = holdingProxy();
  const relay = credentialRelay(`http://u:p@127.0.0.1:${proxy.port}`, () => true, limits)!;
  try {
    await use(relay, proxy);
  } finally {
    relay.close();
    await proxy.close();
  }
}

async function ask(relayUrl: string, raw: string) {
  const c = await Deno.connect({ hostname: "127.0.0.1", port: Number(new URL(relayUrl).port) });
  await c.write(enc.encode(raw));
  const buf = new Uint8Array(256);
  const n = await c.read(buf).catch(() => null);
  return { c, line: dec.decode(buf.subarray(0, n ?? 0)).split("\r\n")[0] };
}

const CONNECT = "CONNECT www.amazon.com:443 HTTP/1.1\r\n\r\n";
const OPENED = "HTTP/1.1 200 Connection established";

function closeQuietly(c: Deno.Conn) {
  try {
    c.close();
  } catch { /* closed */ }
}

Deno.test("a proxy URL with a user name and no password still gets a relay, which sends `user:` on the CONNECT", async () => {
  const proxy = holdingProxy();
  const relay = credentialRelay(`http://user@127.0.0.1:${proxy.port}`, () => true);
  try {
    // Without a relay the runtime would be given the credentials, and send them to the
    // marketplace inside the tunnel.
    assert.notEqual(relay, null, "no relay for a proxy with a user name only");
    const t = await ask(relay!.url, CONNECT);
    assert.equal(t.line, OPENED);
    assert.ok(
      proxy.sides[0].head.includes(`\r\nProxy-Authorization: Basic ${btoa("user:")}\r\n`),
      proxy.sides[0].head,
    );
    t.c.close();
  } finally {
    relay?.close();
    await proxy.close();
  }
});

Deno.test("credentials outside ASCII go on the CONNECT as Basic over their UTF-8 bytes", async () => {
  const proxy = holdingProxy();
  const relay = credentialRelay(
    `http://us%C3%A9r:p%E2%82%ACss@127.0.0.1:${proxy.port}`,
    () => true,
  )!;
  try {
    const t = await ask(relay.url, CONNECT);
    assert.equal(t.line, OPENED);
    const utf8 = btoa(String.fromCharCode(...enc.encode("usér:p€ss")));
    assert.ok(
      proxy.sides[0].head.includes(`\r\nProxy-Authorization: Basic ${utf8}\r\n`),
      proxy.sides[0].head,
    );
    t.c.close();
  } finally {
    relay.close();
    await proxy.close();
  }
});

Deno.test("only a CONNECT request line naming a plain host:port opens a tunnel; anything else is 403 and reaches no proxy", async () => {
  await withRelay({}, async (relay, proxy) => {
    for (
      const raw of [
        // A CONNECT line anywhere but first is a header of some other request.
        "GET / HTTP/1.1\r\nX-Note: CONNECT www.amazon.com:443 HTTP/1.1\r\n\r\n",
        // Anything after the port would be read by the proxy as it likes.
        "CONNECT www.amazon.com:443@evil.example:443 HTTP/1.1\r\n\r\n",
        "CONNECT www.amazon.com:443/x HTTP/1.1\r\n\r\n",
      ]
    ) {
      const t = await ask(relay.url, raw);
      t.c.close();
      assert.equal(t.line, "HTTP/1.1 403 Forbidden", raw);
    }
    assert.equal(proxy.sides.length, 0, "nothing reached the proxy");
  });
});

Deno.test("bytes sent in the same write as the CONNECT head reach the proxy after the CONNECT", async () => {
  await withRelay({}, async (relay, proxy) => {
    const t = await ask(relay.url, `${CONNECT}HELLO`);
    assert.equal(t.line, OPENED);
    await until(() => proxy.sides[0]?.after === "HELLO");
    assert.equal(proxy.sides[0].after, "HELLO");
    t.c.close();
  });
});

Deno.test("with one tunnel allowed, a second asked while the first is open is refused 503", async () => {
  await withRelay({ tunnels: 1 }, async (relay, proxy) => {
    const first = await ask(relay.url, CONNECT);
    assert.equal(first.line, OPENED);
    const second = await ask(relay.url, CONNECT);
    second.c.close();
    assert.equal(second.line, "HTTP/1.1 503 Service Unavailable");
    assert.equal(proxy.sides.length, 1, "the second reached the proxy");
    first.c.close();
  });
});

Deno.test("a client that closes its end of a tunnel closes the proxy's end too, and its place is free again", async () => {
  await withRelay({ tunnels: 1 }, async (relay, proxy) => {
    const first = await ask(relay.url, CONNECT);
    assert.equal(first.line, OPENED);
    first.c.close();
    assert.ok(await until(() => proxy.sides[0].eof), "the proxy's end is still open");
    const next = await ask(relay.url, CONNECT);
    next.c.close();
    assert.equal(next.line, OPENED, "the closed tunnel still holds the only place");
  });
});

Deno.test("closing the relay ends the tunnels it has open, on both sides", async () => {
  const proxy = holdingProxy();
  const relay = credentialRelay(`http://u:p@127.0.0.1:${proxy.port}`, () => true)!;
  let client: Deno.Conn | undefined;
  let closed = false;
  try {
    const t = await ask(relay.url, CONNECT);
    client = t.c;
    assert.equal(t.line, OPENED);
    relay.close();
    closed = true;
    const read = await orAfter(t.c.read(new Uint8Array(16)).catch(() => null), 5_000, "open");
    assert.equal(read, null, "the client's end is still open");
    assert.ok(await until(() => proxy.sides[0].eof), "the proxy's end is still open");
  } finally {
    if (client) closeQuietly(client);
    if (!closed) relay.close();
    await proxy.close();
  }
});

Deno.test("a connection that sends only part of a CONNECT head is closed when the head's time runs out", async () => {
  // The 10 s for the head shortened to 0.1 s.
  await withShortTimers(10_000, 100, async () => {
    const relay = credentialRelay("http://u:p@127.0.0.1:9", () => true)!;
    const c = await Deno.connect({ hostname: "127.0.0.1", port: Number(new URL(relay.url).port) });
    try {
      await c.write(enc.encode("CONNECT www.amazon.com:443 HTTP/1.1\r\n"));
      const read = await orAfter(c.read(new Uint8Array(16)).catch(() => null), 5_000, "open");
      assert.equal(read, null, "a head that never ends holds its connection");
    } finally {
      closeQuietly(c);
      relay.close();
    }
  });
});

Deno.test("the connect bound given to the relay is the one it keeps to: a proxy that never finishes connecting is given up on then", async () => {
  await using mute = muteProxy();
  const relay = credentialRelay(`https://u:p@127.0.0.1:${mute.port}`, () => true, {
    connectMs: 200,
  })!;
  try {
    const c = await Deno.connect({ hostname: "127.0.0.1", port: Number(new URL(relay.url).port) });
    try {
      await c.write(enc.encode(CONNECT));
      // 25 times the bound given; the relay's own default is 10 s.
      const read = await orAfter(c.read(new Uint8Array(256)).catch(() => null), 5_000, "waiting");
      assert.equal(read, null, "the relay still waits for the proxy");
    } finally {
      closeQuietly(c);
    }
  } finally {
    relay.close();
  }
});

Deno.test("a tunnel carrying traffic stays open past the idle bound; once silent for that long it is closed", async () => {
  // The 120 s idle bound shortened to 1 s.
  await withShortTimers(100_000, 120, async () => {
    const proxy = holdingProxy();
    const relay = credentialRelay(`http://u:p@127.0.0.1:${proxy.port}`, () => true)!;
    let client: Deno.Conn | undefined;
    try {
      const t = await ask(relay.url, CONNECT);
      client = t.c;
      assert.equal(t.line, OPENED);
      // A byte every 0.1 s for 2.5 s: busy all along, though open for longer than the bound.
      for (let i = 0; i < 25; i++) {
        await wait(100);
        await t.c.write(enc.encode("x"));
      }
      assert.ok(await until(() => proxy.sides[0].after.length === 25), proxy.sides[0].after);
      assert.equal(proxy.sides[0].eof, false, "a busy tunnel was closed as idle");
      assert.ok(await until(() => proxy.sides[0].eof, 10_000), "a silent tunnel stays open");
      const read = await orAfter(t.c.read(new Uint8Array(16)).catch(() => null), 5_000, "open");
      assert.equal(read, null, "the client's end of a silent tunnel stays open");
    } finally {
      if (client) closeQuietly(client);
      relay.close();
      await proxy.close();
    }
  });
});

Deno.test("a plain-TCP proxy that connects only after the connect bound has that late connection closed once it connects", async () => {
  // A listener that accepts nothing yet: once its queue of 512 connections is full, the kernel
  // drops further SYNs, so a connect stalls until a retransmitted SYN finds room (after 1 s).
  const proxy = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const dial = () => Deno.connect({ hostname: "127.0.0.1", port: proxy.addr.port });
  const ours: Deno.Conn[] = [];
  const accepted: Deno.Conn[] = [];
  let stalled: Promise<Deno.Conn> | undefined;
  const relay = credentialRelay(`http://u:p@127.0.0.1:${proxy.addr.port}`, () => true, {
    connectMs: 200,
  })!;
  try {
    for (;;) {
      const connecting = dial();
      const c = await orAfter(connecting, 500, null);
      if (!c) {
        stalled = connecting; // ours too: it connects once there is room
        break;
      }
      ours.push(c);
      assert.ok(ours.length <= 4_096, "the listener's queue never filled");
    }
    const t = await ask(relay.url, CONNECT);
    t.c.close();
    assert.equal(t.line, "", "the relay did not give up on a proxy that had not connected");
    // Room in the queue: our connections come first, then ours that stalled and the relay's,
    // told apart by their ports.
    for (let i = 0; i < ours.length; i++) accepted.push(await proxy.accept());
    for (let i = 0; i < 2; i++) {
      const c = await orAfter(proxy.accept(), 20_000, null);
      assert.ok(c, "a stalled connection never came");
      accepted.push(c);
    }
    ours.push(await stalled!);
    const ourPorts = new Set(ours.map((c) => (c.localAddr as Deno.NetAddr).port));
    const late = accepted.slice(-2).filter((c) =>
      !ourPorts.has((c.remoteAddr as Deno.NetAddr).port)
    );
    assert.equal(late.length, 1, "the relay's connection is not among those that came");
    const read = await orAfter(late[0].read(new Uint8Array(64)).catch(() => null), 5_000, "open");
    assert.equal(read, null, "the relay kept a connection it had given up on");
  } finally {
    relay.close();
    stalled?.then(closeQuietly, () => {});
    for (const c of [...ours, ...accepted]) closeQuietly(c);
    proxy.close();
  }
});

Deno.test("a relay closed twice throws nothing the second time", () => {
  // A stop may close what an earlier failure already closed; a throw there would cut the stop short.
  const relay = credentialRelay("http://u:p@127.0.0.1:9", () => true)!;
  relay.close();
  relay.close();
});
