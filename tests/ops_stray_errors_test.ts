/**
 * An error that escapes every handler once the service is up (core/stray_errors.ts): the process
 * goes on serving and can still be stopped with its drain, the error is counted in /metrics, and
 * its line on stderr shows neither the key nor the admin token its message held.
 */
import assert from "node:assert/strict";
import { spawnShelf } from "./proof/shelf_process.ts";
import { removeKvFiles } from "../core/kv_files.ts";

const TOKEN = "stray-errors-admin-token-0123456789";
const TRIGGER = new URL("./stray_error_trigger.ts", import.meta.url).pathname;

async function strayCount(url: string): Promise<number> {
  const res = await fetch(`${url}/metrics`, { headers: { authorization: `Bearer ${TOKEN}` } });
  const text = await res.text();
  const m = /^shelf_stray_errors_total (\d+)$/m.exec(text);
  assert.ok(m, text);
  return Number(m[1]);
}

Deno.test("a rejection nobody handles and a callback that throws neither end the process", async () => {
  const kvPath = await Deno.makeTempFile({ suffix: ".kv" });
  const shelf = await spawnShelf({
    KV_PATH: kvPath,
    UPSTREAM: "origin:http://127.0.0.1:9",
    ADMIN_TOKEN: TOKEN,
  }, { preload: TRIGGER });
  try {
    assert.equal(await strayCount(shelf.url), 0);
    Deno.kill(shelf.pid, "SIGUSR2");
    for (let i = 0; i < 200 && (await strayCount(shelf.url)) < 2; i++) {
      await new Promise((r) => setTimeout(r, 50));
    }
    assert.equal(await strayCount(shelf.url), 2);
    const health = await fetch(`${shelf.url}/healthz`);
    assert.equal(health.status, 200);
    assert.deepEqual(await health.json(), { status: "ok" });
    const lines = shelf.logs().split("\n").filter((l) => l.includes("escaped every handler"));
    // Two errors in one interval: the first is written, the second only counted.
    assert.equal(lines.length, 1, shelf.logs());
    assert.match(lines[0], /Symbol\(stray throw\/\*\*\*\/\*\*\*/);
    assert.doesNotMatch(shelf.logs(), /shelf_live_(ab12){12}/);
    assert.ok(!shelf.logs().includes(TOKEN), "the admin token is masked");
    assert.equal(await shelf.stop("SIGTERM"), 0);
    assert.match(shelf.logs(), /"event":"stopped"/);
  } finally {
    await shelf.stop("SIGKILL");
    await removeKvFiles(kvPath);
  }
});
