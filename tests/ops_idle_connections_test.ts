/**
 * Idle connections cannot take the service down (found by holding connections open against a
 * running Shelf). Deno.serve times out no connection, and once accepting one fails because every
 * file descriptor the process may open is taken, it ends its server for good; main.ts left that
 * unhandled, so the process died. It now serves through core/supervised_serve.ts, which reports
 * the failure and listens again on the same address once descriptors are free. The server runs
 * as operators run it, in a child process, with its descriptor limit lowered by prlimit(1) so
 * that a few hundred connections reach it.
 */
import assert from "node:assert/strict";
import { spawnShelf } from "./proof/shelf_process.ts";
import { eventually } from "./smtp_sink.ts";

async function lowerFileLimit(pid: number, limit: number): Promise<void> {
  const out = await new Deno.Command("prlimit", {
    args: ["--pid", String(pid), `--nofile=${limit}:${limit}`],
  }).output().catch(() => null);
  if (!out?.success) {
    throw new Error(
      "ops_idle_connections_test needs prlimit(1) from util-linux to lower the limit",
    );
  }
}

/** The process's open descriptors once their count has not changed for a second. */
async function settledDescriptors(pid: number): Promise<number> {
  const count = () => [...Deno.readDirSync(`/proc/${pid}/fd`)].length;
  let last = count();
  for (let steady = 0, i = 0; steady < 5 && i < 150; i++) {
    await new Promise((r) => setTimeout(r, 200));
    const now = count();
    steady = now === last ? steady + 1 : 0;
    last = now;
  }
  return last;
}

async function healthy(url: string): Promise<boolean> {
  try {
    const r = await fetch(`${url}/healthz`, { signal: AbortSignal.timeout(2_000) });
    await r.body?.cancel();
    return r.status === 200;
  } catch {
    return false;
  }
}

Deno.test("connections held until no descriptor is left do not end the service: it answers again once they close", async () => {
  const dir = await Deno.makeTempDir();
  const shelf = await spawnShelf({
    KV_PATH: `${dir}/shelf.kv`,
    UPSTREAM: "origin:http://127.0.0.1:9",
  });
  const held: Deno.Conn[] = [];
  try {
    // The page workers load their modules after the server listens, opening a file for each:
    // cut off mid-way, the runtime printed an uncaught load error of its own (CI, once).
    const open = await settledDescriptors(shelf.pid);
    await lowerFileLimit(shelf.pid, open + 64);
    const { port } = new URL(shelf.url);
    const line = new TextEncoder().encode("GET /healthz HTTP/1.1\r\n"); // and never the rest
    // Until a connection is refused: the server could accept no more and its listener closed.
    let refused = false;
    for (let i = 0; i < 1_000 && !refused; i++) {
      try {
        const conn = await Deno.connect({ hostname: "127.0.0.1", port: Number(port) });
        held.push(conn);
        await conn.write(line).catch(() => {});
      } catch {
        refused = true;
      }
    }
    assert.ok(refused, `${held.length} connections were all accepted: the limit was not reached`);
    for (const c of held.splice(0)) c.close();
    await eventually("answers again", () => healthy(shelf.url), 20_000);
    assert.match(shelf.logs(), /"event":"listener_failed","error":"[^"]*open files/);
    // Its line is written once the listener is back, and may reach this reader after the answer
    // (CI on a loaded machine read the logs first).
    await eventually(
      "the restart logged",
      () => /"event":"listening","restarts":[1-9]/.test(shelf.logs()),
      5_000,
    );
    assert.doesNotMatch(shelf.logs(), /Uncaught/);
    assert.equal(await shelf.stop("SIGTERM"), 0, "a clean drain after it");
  } finally {
    for (const c of held) c.close();
    await shelf.stop("SIGKILL");
    await Deno.remove(dir, { recursive: true });
  }
});
