/**
 * What an operator meets at either end of a Shelf process: the landing page's security headers,
 * the start-up line (no UPSTREAM password in it), and the stop: a completed drain closes the
 * store, and a request that never ends is given up a second past DRAIN_SECONDS, its credits
 * named, without the forced stop that skips that reckoning. Shelf runs as `deno run main.ts` in
 * a child process where the stop or the start-up line is the subject.
 */
import assert from "node:assert/strict";
import { startServer } from "./test_server.ts";
import { spawnShelf } from "./proof/shelf_process.ts";
import { sendUnendingBody, spawnHoldingCredits } from "./stop_cases.ts";
import { removeKvFiles } from "../core/kv_files.ts";

/** The CSP's directives by name: `frame-ancestors` → ["'none'"]. */
function directives(csp: string): Record<string, string[]> {
  return Object.fromEntries(
    csp.split(";").map((d) => d.trim().split(/\s+/)).filter((d) => d[0])
      .map(([name, ...values]) => [name, values]),
  );
}

/** The JSON event lines of a process's output (the access log and the ops events). */
function events(logs: string): Record<string, unknown>[] {
  return logs.split("\n").filter((l) => l.startsWith("{")).map((l) => JSON.parse(l));
}

Deno.test("GET / is sent with a CSP that loads nothing and may not be framed, and with nosniff", async () => {
  await using s = await startServer();
  const r = await fetch(`${s.url}/`);
  await r.body?.cancel();
  assert.equal(r.status, 200);
  assert.match(r.headers.get("content-type") ?? "", /^text\/html; charset=utf-8$/);
  // The page's only style is inline; a page that any site can frame invites clickjacking.
  const csp = directives(r.headers.get("content-security-policy") ?? "");
  assert.deepEqual(csp["default-src"], ["'none'"]);
  assert.deepEqual(csp["frame-ancestors"], ["'none'"]);
  assert.equal(csp["script-src"], undefined, "no script may run");
  assert.equal(r.headers.get("x-content-type-options"), "nosniff");
});

Deno.test("the start-up line names the upstream mode only, never the password an UPSTREAM origin URL holds", async () => {
  const dir = await Deno.makeTempDir();
  try {
    // A marketplace mirror behind basic auth: the line goes to every log collector.
    await using shelf = await spawnShelf({
      KV_PATH: `${dir}/s.kv`,
      UPSTREAM: "origin:http://shelf:upstream-s3cret@127.0.0.1:9",
    });
    const line = shelf.logs().split("\n").find((l) => l.includes("listening")) ?? "";
    assert.match(line, / · upstream origin · /, line);
    assert.doesNotMatch(shelf.logs(), /upstream-s3cret/);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("SIGTERM: after a drain that completes, the store is closed before the exit (its -wal and -shm files gone), exit 0", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const shelf = await spawnShelf({
      KV_PATH: `${dir}/s.kv`,
      UPSTREAM: "origin:http://127.0.0.1:9",
      DRAIN_SECONDS: "1",
    });
    try {
      const ready = await fetch(`${shelf.url}/readyz`);
      assert.equal(ready.status, 200, await ready.text());
      const open = [...Deno.readDirSync(dir)].map((e) => e.name).sort();
      // Open, SQLite keeps its write-ahead log beside the file: what a closed store removes.
      assert.deepEqual(open, ["s.kv", "s.kv-shm", "s.kv-wal"]);
      assert.equal(await shelf.stop("SIGTERM"), 0, shelf.logs());
    } finally {
      await shelf.stop("SIGKILL");
    }
    // A drain that completed: the plain stop line, neither forced nor giving up on a request.
    const stopped = events(shelf.logs()).filter((e) => e.event === "stopped");
    assert.equal(stopped.length, 1, shelf.logs());
    assert.deepEqual(Object.keys(stopped[0]).sort(), ["event", "ts"]);
    // Left open at the exit, the log was never checkpointed into the store's file.
    assert.deepEqual([...Deno.readDirSync(dir)].map((e) => e.name), ["s.kv"]);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("SIGTERM with DRAIN_SECONDS=3 and a request that never ends: the stop gives up on it, names the credits still held, and stops unforced (exit 0)", async () => {
  const kvPath = await Deno.makeTempFile({ suffix: ".kv" });
  // Credits held as by a call no abort reaches, and a request whose body never comes on a
  // connection its client keeps open: the server's shutdown never completes.
  const shelf = await spawnHoldingCredits(kvPath, "3");
  const conn = await Deno.connect({
    hostname: "127.0.0.1",
    port: Number(new URL(shelf.url).port),
  });
  try {
    await sendUnendingBody(conn);
    assert.equal(await shelf.stop("SIGTERM"), 0, shelf.logs());
    const logs = shelf.logs();
    // Forced, the stop skips this reckoning: the operator never learns what stayed charged.
    assert.match(
      logs,
      /3 credit\(s\) charged to acc_never_ends by calls or watch refreshes still open at the stop: not given back/,
    );
    const lines = events(logs);
    const drain = lines.findIndex((e) => e.event === "drain");
    assert.ok(drain >= 0, logs);
    assert.equal(lines[drain].seconds, 3);
    const stopped = lines.filter((e) => e.event === "stopped");
    assert.equal(stopped.length, 1, logs);
    assert.equal(stopped[0].forced, undefined, `not forced: ${JSON.stringify(stopped[0])}`);
    assert.equal(stopped[0].open_requests, true, "given up on the request still open");
    assert.equal(lines.at(-1), stopped[0], "the last event line");
    assert.ok(lines.indexOf(stopped[0]) > drain);
  } finally {
    conn.close();
    await shelf.stop("SIGKILL");
    await removeKvFiles(kvPath);
  }
});
