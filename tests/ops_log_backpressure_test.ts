/**
 * The log must not hold up serving: stdout is written asynchronously with a bounded backlog, so a
 * log reader that is slow, or stops reading, costs lines (counted in `log_dropped`), not answers.
 * With a synchronous write, a full stdout pipe stopped the whole server.
 */
import assert from "node:assert/strict";
import { freePort, startV8Flags } from "./proof/shelf_process.ts";

const MAIN = new URL("../main.ts", import.meta.url).pathname;

Deno.test("a stdout nobody reads fills with log lines, and the server still answers", async () => {
  const dir = await Deno.makeTempDir();
  const port = freePort();
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "--allow-all", ...startV8Flags(), MAIN],
    env: {
      PORT: String(port),
      HOST: "127.0.0.1",
      KV_PATH: `${dir}/s.kv`,
      UPSTREAM: "origin:http://127.0.0.1:9",
      NO_COLOR: "1",
    },
    stdout: "piped",
    stderr: "null",
    stdin: "null",
  }).spawn();
  const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  try {
    let out = "";
    while (!out.includes("listening")) {
      const { value, done } = await reader.read();
      if (done) throw new Error(`shelf exited: ${out}`);
      out += value;
    }
    // From here on nobody reads: the pipe (64 KiB) fills after a few dozen of these 2 KB lines.
    const base = `http://127.0.0.1:${port}`;
    const long = "/" + "x".repeat(2_000);
    const started = performance.now();
    for (let round = 0; round < 20 && performance.now() - started < 15_000; round++) {
      await Promise.all(
        Array.from(
          { length: 50 },
          () =>
            fetch(base + long, { signal: AbortSignal.timeout(5_000) }).then(
              (r) => r.body?.cancel(),
              () => {}, // a server held up by its log answers nothing: the health check says so
            ),
        ),
      );
    }
    const health = await fetch(`${base}/healthz`, { signal: AbortSignal.timeout(5_000) });
    assert.equal(health.status, 200);
    await health.body?.cancel();
  } finally {
    child.kill("SIGKILL");
    await reader.cancel().catch(() => {});
    await child.status;
    await Deno.remove(dir, { recursive: true });
  }
});
