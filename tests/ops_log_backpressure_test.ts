/**
 * The log must not hold up serving: stdout and stderr are written asynchronously with a bounded
 * backlog, so a log reader that is slow, or stops reading, costs lines (counted in `log_dropped`),
 * not answers, nor a stop. With a synchronous write, a full pipe stopped the whole server, and a
 * SIGTERM never ended it.
 */
import assert from "node:assert/strict";
import { freePort, startFlags } from "./proof/shelf_process.ts";
import { LineWriter } from "../core/line_writer.ts";

const MAIN = new URL("../main.ts", import.meta.url).pathname;

/**
 * Shelf as a child whose stdout is read up to its "listening" line and then no more, and whose
 * stderr is never read: both pipes (64 KiB) fill with what the server writes.
 */
async function unreadShelf(env: Record<string, string> = {}) {
  const dir = await Deno.makeTempDir();
  const port = freePort();
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "--allow-all", ...startFlags(), MAIN],
    env: {
      PORT: String(port),
      HOST: "127.0.0.1",
      KV_PATH: `${dir}/s.kv`,
      UPSTREAM: "origin:http://127.0.0.1:9",
      NO_COLOR: "1",
      ...env,
    },
    stdout: "piped",
    stderr: "piped",
    stdin: "null",
  }).spawn();
  const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  const dispose = async () => {
    try {
      child.kill("SIGKILL");
    } catch { /* already gone */ }
    await reader.cancel().catch(() => {});
    await child.stderr.cancel().catch(() => {});
    await child.status;
    await Deno.remove(dir, { recursive: true });
  };
  let out = "";
  while (!out.includes("listening")) {
    const { value, done } = await reader.read();
    if (done) {
      await dispose();
      throw new Error(`shelf exited: ${out}`);
    }
    out += value;
  }
  return { child, base: `http://127.0.0.1:${port}`, [Symbol.asyncDispose]: dispose };
}

/** Sends `rounds` × 50 requests (for at most 15 s); a held-up server answering none is fine here. */
async function flood(rounds: number, send: (round: number, i: number) => Promise<Response>) {
  const started = performance.now();
  for (let round = 0; round < rounds && performance.now() - started < 15_000; round++) {
    await Promise.all(
      Array.from({ length: 50 }, (_, i) => send(round, i).then((r) => r.body?.cancel(), () => {})),
    );
  }
}

async function assertAnswers(base: string) {
  const health = await fetch(`${base}/healthz`, { signal: AbortSignal.timeout(5_000) });
  assert.equal(health.status, 200);
  await health.body?.cancel();
}

Deno.test("a stdout nobody reads fills with log lines, and the server still answers", async () => {
  await using shelf = await unreadShelf();
  // The pipe fills after a few dozen access lines of these 2 KB paths.
  const long = "/" + "x".repeat(2_000);
  await flood(20, () => fetch(shelf.base + long, { signal: AbortSignal.timeout(5_000) }));
  await assertAnswers(shelf.base);
});

Deno.test("a stderr nobody reads fills with error lines any client can cause; the server answers and still stops on SIGTERM", async () => {
  await using shelf = await unreadShelf({
    SMTP_URL: `smtp://127.0.0.1:${freePort()}`, // nothing listens: every mail fails
    DRAIN_SECONDS: "1",
  });
  // Past the mail limit, each "forgot password" form writes an error line.
  const page = await fetch(`${shelf.base}/dashboard/forgot`);
  const csrf = /name="_csrf" value="([0-9a-f]+)"/.exec(await page.text())![1];
  const cookie = page.headers.getSetCookie().map((c) => c.split(";")[0]).join("; ");
  await flood(20, (round, i) =>
    fetch(`${shelf.base}/dashboard/forgot`, {
      method: "POST",
      headers: { cookie, "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({
        _csrf: csrf,
        email: `flood-${round}-${i}-${"x".repeat(100)}@example.com`,
      }),
      signal: AbortSignal.timeout(5_000),
    }));
  await assertAnswers(shelf.base);
  const stopping = performance.now();
  shelf.child.kill("SIGTERM");
  const ended = await Promise.race([
    shelf.child.status.then(() => true),
    new Promise<boolean>((r) => setTimeout(() => r(false), 8_000)),
  ]);
  assert.ok(ended, "exited within DRAIN_SECONDS + 5 s and a margin");
  assert.ok(performance.now() - stopping < 8_000);
});

/**
 * A stream for a LineWriter that keeps what it is given, at most `most` bytes a write (as a pipe
 * with that much room takes part of a write), and holds its first write until `release()`.
 */
function heldStream(most = Infinity) {
  const chunks: Uint8Array[] = [];
  let release!: () => void;
  const held = new Promise<void>((r) => (release = r));
  let writes = 0;
  return {
    release,
    async write(p: Uint8Array): Promise<number> {
      if (writes++ === 0) await held;
      const n = Math.min(p.length, most);
      chunks.push(p.slice(0, n));
      return n;
    },
    lines(): string[] {
      const all = new Uint8Array(chunks.reduce((s, c) => s + c.length, 0));
      let at = 0;
      for (const c of chunks) {
        all.set(c, at);
        at += c.length;
      }
      const text = new TextDecoder().decode(all);
      assert.ok(text.endsWith("\n"), "whole lines only");
      return text.slice(0, -1).split("\n");
    },
  };
}

Deno.test("log lines behind a stalled reader wait within 8 MiB; the rest are dropped and a log_dropped line says how many", async () => {
  const stream = heldStream();
  const writer = new LineWriter(
    stream,
    (n) => JSON.stringify({ event: "log_dropped", lines: n }),
  );
  writer.line("first");
  await new Promise((r) => setTimeout(r, 10)); // written, and the reader stalls on it
  // Lines of 1 KiB with their newline: 8,192 fill the backlog exactly; 1,808 more are dropped.
  const fit = 8 * 1024 * 1024 / 1024; // the documented 8 MiB, not the constant under test
  const sent = fit + 1_808;
  for (let i = 0; i < sent; i++) writer.line(String(i).padStart(1_023, "0"));
  await new Promise((r) => setTimeout(r, 10));
  stream.release();
  await writer.settle(5_000);
  const lines = stream.lines();
  assert.equal(lines[0], "first");
  assert.equal(
    lines[1],
    JSON.stringify({ event: "log_dropped", lines: 1_808 }),
    "the drop is told",
  );
  const kept = lines.slice(2);
  assert.equal(kept.length, fit, "the backlog held 8 MiB of lines, no more");
  assert.equal(Number(kept[0]), 0);
  assert.equal(Number(kept.at(-1)), fit - 1, "the first lines are kept, the later ones dropped");
});

Deno.test("the 8 MiB a stalled reader's backlog holds are bytes: lines of three-byte characters fill it three times sooner", async () => {
  const stream = heldStream();
  const writer = new LineWriter(stream, (n) => `dropped ${n}`);
  writer.line("first");
  await new Promise((r) => setTimeout(r, 10)); // written, and the reader stalls on it
  // 341 characters of three bytes and a newline: 1,024 bytes a line, 8,192 lines fill 8 MiB.
  const line = (i: number) => String(i).padStart(4, "0") + "語".repeat(339) + "é";
  assert.equal(new TextEncoder().encode(line(0) + "\n").length, 1_024);
  const fit = 8 * 1024 * 1024 / 1024;
  for (let i = 0; i < fit + 500; i++) writer.line(line(i));
  await new Promise((r) => setTimeout(r, 10));
  stream.release();
  await writer.settle(5_000);
  const lines = stream.lines();
  assert.equal(lines[1], "dropped 500");
  assert.equal(lines.length - 2, fit, "8 MiB of lines kept, no more");
  assert.equal(lines.at(-1), line(fit - 1));
});

Deno.test("a stream that takes part of each write still gets every log line whole", async () => {
  // A pipe with little room takes a part of each write; the rest must follow, not be lost.
  const stream = heldStream(1_000);
  const writer = new LineWriter(stream, (n) => `dropped ${n}`);
  const sent = Array.from(
    { length: 200 },
    (_, i) => JSON.stringify({ event: "access", i, path: "/" + "x".repeat(i * 7) }),
  );
  for (const line of sent) writer.line(line);
  await new Promise((r) => setTimeout(r, 10));
  stream.release();
  await writer.settle(5_000);
  const lines = stream.lines();
  assert.deepEqual(lines, sent);
  for (const line of lines) JSON.parse(line);
});
