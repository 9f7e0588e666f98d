/**
 * Which record of a replay archive answers, and as what (upstream/archive_transport.ts,
 * INTERFACE.md "Replay archives"): the latest record of a URL, with the status it was recorded
 * with; only files named .warc or .warc.gz in a folder; a body that can be read again after a page
 * worker took the first copy. Real server in archive mode over HTTP where the answer shows there;
 * the transport itself where only its interface shows it (headers, the read budget).
 */
import assert from "node:assert/strict";
import { startRig } from "./upstream_harness.ts";
import { fixtureBytes } from "./fixture.ts";
import { ArchiveTransport } from "../upstream/archive_transport.ts";
import { PagePool } from "../upstream/page_pool.ts";
import type { UpstreamRequest } from "../upstream/transport.ts";

const encoder = new TextEncoder();
const DP = "https://www.amazon.com/dp/B07H57DNVV";
const DETAILS = "/v1/products/details?asin=B07H57DNVV";
const TITLE = "Anthem Of The Peaceful Army";

/** A product page's HTTP head as recorded. */
const html = "HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\n";
/** A product withdrawn: the marketplace's 404 with a plain body (not its "dogs" page). */
const gone = "HTTP/1.1 404 Not Found\r\nContent-Type: text/html; charset=utf-8\r\n";
const GONE_BODY = "<html><head><title>Gone</title></head><body>No such item.</body></html>";

/** One WARC response record of `url`: the HTTP head `head`, then `body`. */
function record(url: string, head: string, body: string | Uint8Array): Uint8Array {
  const bytes = typeof body === "string" ? encoder.encode(body) : body;
  const block = new Uint8Array([...encoder.encode(head + "\r\n"), ...bytes]);
  const warc = encoder.encode(
    `WARC/1.0\r\nWARC-Type: response\r\n` +
      `WARC-Target-URI: ${url}\r\nWARC-Date: 2026-01-01T00:00:00Z\r\n` +
      `WARC-Record-ID: <urn:uuid:${crypto.randomUUID()}>\r\n` +
      `Content-Type: application/http; msgtype=response\r\n` +
      `Content-Length: ${block.length}\r\n\r\n`,
  );
  return new Uint8Array([...warc, ...block, ...encoder.encode("\r\n\r\n")]);
}

const joined = (...parts: Uint8Array[]) => new Uint8Array(parts.flatMap((p) => [...p]));

async function gzip(bytes: Uint8Array): Promise<Uint8Array> {
  const stream = new Blob([bytes as Uint8Array<ArrayBuffer>]).stream()
    .pipeThrough(new CompressionStream("gzip"));
  return new Uint8Array(await new Response(stream).arrayBuffer());
}

/** Runs `test` with a folder for archive files (removed after) and the corpus product page. */
async function inArchiveDir(test: (dir: string, page: Uint8Array) => Promise<void>) {
  const dir = await Deno.makeTempDir();
  try {
    await test(dir, await fixtureBytes("product/amazon.com__app-B07H57DNVV.html"));
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

const request = (url: string) => ({ url }) as UpstreamRequest;
const text = (b: Uint8Array) => new TextDecoder().decode(b);

async function assertUncharged(rig: { call: (p: string) => Promise<{ body: unknown }> }) {
  const usage = await rig.call("/v1/usage");
  assert.equal((usage.body as { requests_used: number }).requests_used, 0);
}

Deno.test("archive over HTTP: what the records of a URL answer", async (t) => {
  await t.step("a recorded 404 answers the uncharged 404 not_found a live one does", async () => {
    // Replayed as a 200, the plain "gone" page would be an unknown page type: a 502 to retry.
    await inArchiveDir(async (dir) => {
      await Deno.writeFile(`${dir}/a.warc`, record(DP, gone, GONE_BODY));
      await using rig = await startRig({ upstream: `archive:${dir}/a.warc` });
      const r = await rig.call(DETAILS);
      assert.equal(r.status, 404, JSON.stringify(r.body));
      assert.equal((r.body.error as { code: string }).code, "not_found");
      assert.equal(r.headers.get("x-credits-cost"), "0");
      await assertUncharged(rig);
    });
  });

  await t.step("a URL recorded twice in one file answers with its latest record", async () => {
    await inArchiveDir(async (dir, page) => {
      // Gone when first recorded, back on sale when recorded again.
      await Deno.writeFile(
        `${dir}/a.warc`,
        joined(record(DP, gone, GONE_BODY), record(DP, html, page)),
      );
      await using rig = await startRig({ upstream: `archive:${dir}/a.warc` });
      const r = await rig.call(DETAILS);
      assert.equal(r.status, 200, JSON.stringify(r.body).slice(0, 300));
      assert.equal(r.body.title, TITLE);
    });
  });

  await t.step(
    "the same record answers again after a page worker took the first body",
    async () => {
      // The page pool transfers each body's buffer to its worker: a record handed out without a
      // copy would be empty for every later call of that URL.
      await inArchiveDir(async (dir, page) => {
        await Deno.writeFile(`${dir}/a.warc`, record(DP, html, page));
        await using rig = await startRig({
          upstream: `archive:${dir}/a.warc`,
          // The worker's first start (its module graph loaded) is slow on a loaded machine.
          reader: new PagePool({ size: 1, timeoutMs: 90_000 }),
        });
        for (const call of [1, 2, 3]) {
          const r = await rig.call(DETAILS);
          assert.equal(r.status, 200, `call ${call}: ${JSON.stringify(r.body).slice(0, 300)}`);
          assert.equal(r.body.title, TITLE, `call ${call}`);
        }
      });
    },
  );

  await t.step(
    "a folder's files not named .warc or .warc.gz are not read (a .bak, a .part)",
    async () => {
      await inArchiveDir(async (dir, page) => {
        await Deno.writeFile(`${dir}/a.warc`, record(DP, html, page));
        // Sorted after a.warc, either would replace its record if it were read.
        await Deno.writeFile(`${dir}/z.warc.bak`, record(DP, gone, GONE_BODY));
        await Deno.writeFile(`${dir}/z.warc.gz.part`, record(DP, gone, GONE_BODY));
        const lines: Record<string, unknown>[] = [];
        await using rig = await startRig({
          upstream: `archive:${dir}`,
          browser: { log: (l) => void lines.push(l) },
        });
        const r = await rig.call(DETAILS);
        assert.equal(r.status, 200, JSON.stringify(r.body).slice(0, 300));
        assert.equal(r.body.title, TITLE);
        assert.deepEqual(lines, [{ event: "archive_loaded", records: 1 }]);
      });
    },
  );
});

Deno.test("archive transport: a gzip record answers decoded, without the headers of its encoded bytes", async () => {
  // A Content-Encoding kept on a decoded body would have it decoded a second time by a reader.
  await inArchiveDir(async (dir) => {
    const zipped = await gzip(encoder.encode("<html>hello page</html>"));
    const head = `${html}Content-Encoding: gzip\r\nContent-Length: ${zipped.length}\r\n`;
    await Deno.writeFile(`${dir}/a.warc`, record(DP, head, zipped));
    const r = await new ArchiveTransport(`${dir}/a.warc`).fetch(request(DP));
    assert.equal(r.status, 200);
    assert.equal(text(r.body), "<html>hello page</html>");
    assert.equal(r.headers.get("content-encoding"), null);
    assert.equal(r.headers.get("content-length"), null);
    assert.equal(r.headers.get("content-type"), "text/html; charset=utf-8");
  });
});

Deno.test("archive transport: a URL recorded again frees what its replaced record held from the budget", async () => {
  // Two records of 10 KB under a 15 KB budget: counted twice, the second would stop the reading
  // (an `unread` line) and the older record would answer.
  await inArchiveDir(async (dir) => {
    const body = "x".repeat(10_000);
    await Deno.writeFile(
      `${dir}/a.warc`,
      joined(record(DP, html, `${body}first`), record(DP, html, `${body}second`)),
    );
    const lines: Record<string, unknown>[] = [];
    const archive = new ArchiveTransport(`${dir}/a.warc`, (l) => void lines.push(l), {
      held: 15_000,
      read: 1 << 30,
    });
    const r = await archive.fetch(request(DP));
    assert.ok(text(r.body).endsWith("second"), text(r.body).slice(-20));
    assert.deepEqual(lines, [{ event: "archive_loaded", records: 1 }]);
  });
});
