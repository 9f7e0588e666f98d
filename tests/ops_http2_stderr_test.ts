/**
 * Deno's HTTP server writes one line to stderr for each cleartext HTTP/2 connection whose client
 * resets streams faster than it accepts them ("recv_reset; remotely-reset pending-accept streams
 * reached limit"), synchronously, on the thread that serves every request: no key is needed, a
 * stalled stderr reader then froze the whole server after about 950 such connections, and a read
 * one grew by 1.3 MB in 10 s (probe AF). `deno task start` runs with --quiet, which keeps Deno's
 * own diagnostics off stderr; Shelf's error lines and uncaught errors are still written.
 */
import assert from "node:assert/strict";
import { FakeMarketplace } from "./fake_marketplace.ts";
import { spawnShelf } from "./proof/shelf_process.ts";
import { tempKv } from "./proof/http.ts";
import { removeKvFiles } from "../core/kv_files.ts";

const PREFACE = new TextEncoder().encode("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n");

function frame(type: number, flags: number, stream: number, payload: Uint8Array): Uint8Array {
  const out = new Uint8Array(9 + payload.length);
  out.set([payload.length >> 16, (payload.length >> 8) & 255, payload.length & 255, type, flags]);
  new DataView(out.buffer).setUint32(5, stream);
  out.set(payload, 9);
  return out;
}

/** One connection that opens 40 streams and resets each at once (HTTP/2 "rapid reset"). */
async function rapidReset(port: number): Promise<void> {
  // HPACK: :method GET, :scheme http, :path /, :authority "a" (a literal with an indexed name).
  const headers = new Uint8Array([0x82, 0x86, 0x84, 0x01, 0x01, 0x61]);
  const parts = [PREFACE, frame(4, 0, 0, new Uint8Array(0))];
  for (let i = 0; i < 40; i++) {
    const stream = 1 + 2 * i;
    parts.push(frame(1, 0x5, stream, headers), frame(3, 0, stream, new Uint8Array([0, 0, 0, 8])));
  }
  const all = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  parts.reduce((at, p) => (all.set(p, at), at + p.length), 0);
  const conn = await Deno.connect({ hostname: "127.0.0.1", port });
  try {
    try {
      await conn.write(all);
    } catch {
      // The server may end the connection (GOAWAY) before it has read every frame: a broken
      // pipe here is the reset limit doing its work.
    }
    const buf = new Uint8Array(65536);
    const deadline = setTimeout(() => conn.close(), 2000);
    try {
      while ((await conn.read(buf)) !== null) { /* until the server closes */ }
    } catch { /* closed by the deadline */ }
    clearTimeout(deadline);
  } finally {
    try {
      conn.close();
    } catch { /* already closed */ }
  }
}

Deno.test("HTTP/2 rapid-reset connections write nothing to the server's stderr", async () => {
  await using fake = new FakeMarketplace();
  const kvPath = await tempKv();
  await using shelf = await spawnShelf({ KV_PATH: kvPath, UPSTREAM: fake.upstream });
  try {
    const port = Number(new URL(shelf.url).port);
    for (let i = 0; i < 20; i++) await rapidReset(port);
    const ok = await fetch(`${shelf.url}/healthz`);
    assert.equal(ok.status, 200);
    await ok.body?.cancel();
    const lines = shelf.logs().split("\n").filter((l) => /recv_reset|remotely-reset/.test(l));
    assert.equal(lines.length, 0, `Deno's diagnostics on stderr: ${lines.slice(0, 2).join(" | ")}`);
  } finally {
    await removeKvFiles(kvPath);
  }
});
