/**
 * The upstream settings at their edges (upstream/select.ts, README "Configuration"): a bad
 * UPSTREAM refused without its password, HTTP_PROXY read before HTTPS_PROXY, UPSTREAM_RECORD_MAX_MB
 * empty as unset (its MiB are pinned in e2e_record_replay_test), and an archive's loading reported on the operator's log.
 */
import assert from "node:assert/strict";
import { checkUpstream, proxiesSet } from "../upstream/select.ts";
import { startRig } from "./upstream_harness.ts";
import { FakeMarketplace } from "./fake_marketplace.ts";
import { spawnShelf, startFails } from "./proof/shelf_process.ts";

const SAMPLE = new URL("../demo/sample.warc.gz", import.meta.url).pathname;
const PAGE = "product/amazon.com__app-B07H57DNVV.html";

const env = (vars: Record<string, string>) => ({ get: (k: string) => vars[k] });

/** Waits, up to a generous bound, until `logs()` matches `pattern`. */
async function logged(logs: () => string, pattern: RegExp): Promise<string> {
  const stop = Date.now() + 30_000;
  while (!pattern.test(logs()) && Date.now() < stop) {
    await new Promise((r) => setTimeout(r, 50));
  }
  const m = pattern.exec(logs());
  assert.ok(m, `no ${pattern} within 30 s in:\n${logs()}`);
  return m[0];
}

Deno.test("an UPSTREAM that is a bare URL with a password is refused naming the setting, never the password", async () => {
  const upstream = "https://u:pw123secret@fake.test/";
  assert.throws(
    () => checkUpstream(upstream, env({})),
    (e: Error) =>
      /^Cannot start as 'UPSTREAM' must be live, origin:URL or archive:PATH: current value is "https:\/\/fake\.test\/"$/
        .test(e.message) && !e.message.includes("pw123secret"),
  );
  // As the operator meets it: one line on stderr, exit code 1, the password on neither stream.
  const dir = await Deno.makeTempDir();
  try {
    const out = await startFails({ KV_PATH: `${dir}/s.kv`, UPSTREAM: upstream });
    const { stderr, stdout } = out;
    assert.equal(out.code, 1, stderr + stdout);
    const lines = stderr.split("\n").filter((l) => l.trim());
    assert.equal(lines.length, 1, stderr);
    assert.match(lines[0], /^shelf: Cannot start as 'UPSTREAM' must be live, origin:URL/);
    assert.ok(!(stderr + stdout).includes("pw123secret"), "the password was printed");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("HTTP_PROXY is read before HTTPS_PROXY: with both set, the start-up line names HTTP_PROXY and its count", async () => {
  assert.deepEqual(
    proxiesSet(env({ HTTPS_PROXY: "http://a.example:1", HTTP_PROXY: "http://b:2,http://c:3" })),
    { setting: "HTTP_PROXY", count: 2 },
  );
  // The one read is the one checked: a bad HTTPS_PROXY behind a good HTTP_PROXY is not used.
  assert.doesNotThrow(() =>
    checkUpstream("live", env({ HTTP_PROXY: "http://b:2", HTTPS_PROXY: "ftp://x:21" }))
  );
  const dir = await Deno.makeTempDir();
  try {
    await using shelf = await spawnShelf({
      KV_PATH: `${dir}/s.kv`,
      UPSTREAM: "origin:http://127.0.0.1:9",
      UPSTREAM_PROXIES: "", // empty is unset, whatever this machine's environment says
      HTTP_PROXY: "http://127.0.0.1:9,http://127.0.0.1:10",
      HTTPS_PROXY: "http://127.0.0.1:11",
    });
    const line = shelf.logs().split("\n").find((l) => l.includes("listening")) ?? "";
    assert.match(line, / · 2 proxies \(HTTP_PROXY\)$/);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("UPSTREAM_RECORD_MAX_MB left empty is unset: the server starts and records under the default cap", async () => {
  assert.doesNotThrow(() =>
    checkUpstream("origin:http://127.0.0.1:9", env({ UPSTREAM_RECORD_MAX_MB: "" }))
  );
  const dir = await Deno.makeTempDir();
  await using _dir = { [Symbol.asyncDispose]: () => Deno.remove(dir, { recursive: true }) };
  const warc = `${dir}/rec.warc`;
  await using fake = new FakeMarketplace();
  fake.page("https://www.amazon.com/dp/B07H57DNVV", PAGE);
  // As `docker run -e UPSTREAM_RECORD_MAX_MB=` or an env file writes it.
  await using rig = await startRig({
    fake,
    env: { UPSTREAM_RECORD: warc, UPSTREAM_RECORD_MAX_MB: "" },
  });
  const r = await rig.call("/v1/products/details?asin=B07H57DNVV");
  assert.equal(r.status, 200, JSON.stringify(r.body).slice(0, 300));
  const text = await Deno.readTextFile(warc);
  assert.equal(text.match(/^WARC\/1\.1\r$/gm)?.length, 1, "the page was recorded");
});

Deno.test("a server replaying an archive logs archive_loaded with its record count; a file that is no WARC is reported unread", async () => {
  const dir = await Deno.makeTempDir();
  try {
    {
      await using shelf = await spawnShelf({
        KV_PATH: `${dir}/a.kv`,
        UPSTREAM: `archive:${SAMPLE}`,
      });
      const line = await logged(shelf.logs, /^\{[^\n]*"event":"archive_loaded"[^\n]*\}$/m);
      assert.equal(JSON.parse(line).records, 6, line);
    }
    // Without the line the operator would learn only from 502s that nothing was read.
    const junk = `${dir}/junk.warc`;
    await Deno.writeTextFile(junk, "not a WARC file\n");
    {
      await using shelf = await spawnShelf({
        KV_PATH: `${dir}/b.kv`,
        UPSTREAM: `archive:${junk}`,
      });
      const line = JSON.parse(
        await logged(shelf.logs, /^\{[^\n]*"event":"archive_(loaded|unreadable)"[^\n]*\}$/m),
      );
      assert.equal(line.event, "archive_loaded", JSON.stringify(line));
      assert.equal(line.records, 0);
      assert.ok(
        Array.isArray(line.unread) && line.unread.some((u: string) => u.startsWith(junk)),
        JSON.stringify(line),
      );
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
