/**
 * /readyz answers 503 when the store does not answer a read within 1 s (INTERFACE.md). A KV file
 * never stalls on demand, so the store here is a KV Connect endpoint on loopback that completes
 * the protocol's metadata exchange, as a denokv server does, and then never answers a read: what a
 * hung or partitioned denokv server looks like to Shelf. The server is the real app over it.
 */
import assert from "node:assert/strict";
import { startServer } from "./test_server.ts";

Deno.test("/readyz: a store that does not answer a read within 1 s is a 503 in the spec's shape, after about 1 s", async () => {
  let port = 0;
  const reads: string[] = [];
  const stalled = new AbortController();
  const kvServer = Deno.serve(
    { port: 0, hostname: "127.0.0.1", onListen() {}, signal: stalled.signal },
    (req) => {
      const path = new URL(req.url).pathname;
      if (path === "/") {
        return Response.json({
          version: 2,
          databaseId: "00000000-0000-4000-8000-000000000000",
          endpoints: [{ url: `http://127.0.0.1:${port}/data`, consistency: "strong" }],
          token: "readyz-test",
          expiresAt: "2099-01-01T00:00:00Z",
        });
      }
      reads.push(path);
      return new Promise<Response>((resolve) =>
        stalled.signal.addEventListener("abort", () => resolve(new Response(null, { status: 503 })))
      );
    },
  );
  port = kvServer.addr.port;
  Deno.env.set("DENO_KV_ACCESS_TOKEN", "readyz-test-token-0123456789");
  try {
    await using s = await startServer({ kvPath: `http://127.0.0.1:${port}` });
    const t0 = performance.now();
    const r = await fetch(`${s.url}/readyz`);
    const ms = performance.now() - t0;
    assert.equal(r.status, 503);
    const body = await r.json();
    assert.equal(body.error.status, 503);
    assert.equal(typeof body.error.code, "string");
    assert.ok(ms >= 900 && ms < 3_000, `answered after ${ms.toFixed(0)} ms`);
    assert.ok(reads.some((p) => p.endsWith("snapshot_read")), "the probe did read the store");
    const health = await fetch(`${s.url}/healthz`);
    assert.equal(health.status, 200, "the process itself still serves");
    await health.body?.cancel();
    stalled.abort();
  } finally {
    stalled.abort();
    await kvServer.finished;
  }
});

Deno.test("/readyz: a store file removed or replaced under the running process is a 503 (probe CP)", async () => {
  const { spawnShelf } = await import("./proof/shelf_process.ts");
  const dir = await Deno.makeTempDir();
  try {
    const kvPath = `${dir}/ready.kv`;
    await using shelf = await spawnShelf({
      KV_PATH: kvPath,
      UPSTREAM: "origin:http://127.0.0.1:9",
    });
    const ready = await fetch(`${shelf.url}/readyz`);
    assert.equal(ready.status, 200);
    await ready.body?.cancel();
    // Moved aside and replaced by another file: the process still writes to the one it opened.
    await Deno.rename(kvPath, `${kvPath}.old`);
    const gone = await fetch(`${shelf.url}/readyz`);
    assert.equal(gone.status, 503);
    assert.equal((await gone.json()).error.code, "not_ready");
    await Deno.writeFile(kvPath, new Uint8Array());
    const replaced = await fetch(`${shelf.url}/readyz`);
    assert.equal(replaced.status, 503);
    await replaced.body?.cancel();
    const alive = await fetch(`${shelf.url}/healthz`);
    assert.equal(alive.status, 200, "the process still serves");
    await alive.body?.cancel();
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
