/**
 * Deno.serve speaks cleartext HTTP/2 (prior knowledge) on the same port, 200 streams a connection.
 * A client that keeps its flow-control window shut and never reads must not make the server hold
 * a whole copy of each large answer (probe T: 15 connections held 5.2 GB of the docs bundle).
 * The client here writes HTTP/2 frames by hand over TCP: fetch speaks HTTP/2 only over TLS.
 */
import assert from "node:assert/strict";
import bundle from "swagger-ui-dist/swagger-ui-bundle.js" with { type: "text" };
import { startServer } from "./test_server.ts";
import { eventually } from "./smtp_sink.ts";

const PREFACE = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";

function frame(type: number, flags: number, stream: number, payload: Uint8Array): Uint8Array {
  const f = new Uint8Array(9 + payload.length);
  const v = new DataView(f.buffer);
  v.setUint32(0, payload.length << 8); // 24-bit length, then the type byte written below
  f[3] = type;
  f[4] = flags;
  v.setUint32(5, stream & 0x7fffffff);
  f.set(payload, 9);
  return f;
}

/** HPACK: `:method GET`, `:scheme http` (indexed), `:path` and `:authority` (literal values). */
function requestHeaders(path: string): Uint8Array {
  const text = (s: string) => [s.length, ...new TextEncoder().encode(s)];
  return new Uint8Array([0x82, 0x86, 0x04, ...text(path), 0x01, ...text("127.0.0.1")]);
}

/** A connection whose streams' windows are 0, asking for `path` on `streams` streams. */
async function stalledConnection(port: number, path: string, streams: number) {
  const conn = await Deno.connect({ hostname: "127.0.0.1", port });
  const settings = new Uint8Array(6);
  new DataView(settings.buffer).setUint16(0, 0x4); // SETTINGS_INITIAL_WINDOW_SIZE = 0
  const parts = [new TextEncoder().encode(PREFACE), frame(0x4, 0, 0, settings)];
  for (let i = 0; i < streams; i++) {
    parts.push(frame(0x1, 0x5, 1 + 2 * i, requestHeaders(path))); // END_STREAM | END_HEADERS
  }
  for (const p of parts) await conn.write(p);
  return conn;
}

Deno.test("HTTP/2 streams that never open their window hold a few chunks of a large answer each, not a copy", async () => {
  const seen: string[] = [];
  await using s = await startServer({ accessLog: (l) => void seen.push(String(l.path)) });
  const port = Number(new URL(s.url).port);
  const path = "/docs/swagger-ui-bundle.js";
  // Served whole over HTTP/1.1, twice: the paced body's views leave the shared bytes intact.
  for (let i = 0; i < 2; i++) assert.equal(await (await fetch(s.url + path)).text(), bundle);
  const before = Deno.memoryUsage().rss;
  const conns = [];
  try {
    for (let i = 0; i < 2; i++) conns.push(await stalledConnection(port, path, 200));
    await eventually("400 stalled answers", () => seen.filter((p) => p === path).length >= 402);
    await new Promise((r) => setTimeout(r, 1_000));
    const grown = (Deno.memoryUsage().rss - before) / 2 ** 20;
    // Whole copies: 400 × 1.5 MB = about 600 MiB. Paced: a few 16 KB chunks each.
    assert.ok(grown < 150, `server memory grew ${grown.toFixed(0)} MiB for 400 stalled streams`);
  } finally {
    for (const c of conns) c.close();
  }
});
