/**
 * The log must not hold up serving: stdout and stderr are written asynchronously with a bounded
 * backlog, so a log reader that is slow, or stops reading, costs lines (counted in `log_dropped`),
 * not answers, nor a stop. With a synchronous write, a full pipe stopped the whole server, and a
 * SIGTERM never ended it.
 */
import assert from "node:assert/strict";
import { freePort, startFlags } from "./proof/shelf_process.ts";

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
