/**
 * Archived bodies decoded as fetch decodes them, never past the page cap at any step
 * (upstream/record_body.ts; probe EG: one 4 GiB chunk of gzip in a 12 KB file took 4.4 GB).
 */
import assert from "node:assert/strict";
import zlib from "node:zlib";
import { dechunk, decodeBody } from "../upstream/record_body.ts";

const enc = new TextEncoder();
const text = (d: Awaited<ReturnType<typeof decodeBody>>) =>
  "body" in d ? new TextDecoder().decode(d.body) : `unusable: ${d.unusable}`;
const MiB = 1 << 20;

Deno.test("record body: chunked, with extensions and trailer fields, and already de-chunked", async () => {
  const chunked = enc.encode("5;ext=1\r\nhello\r\n6\r\n world\r\n0\r\nX-Trailer: 1\r\n\r\n");
  assert.equal(text(await decodeBody(chunked, "chunked", undefined, MiB)), "hello world");
  assert.equal(
    text(await decodeBody(enc.encode("<html>done</html>"), "chunked", undefined, MiB)),
    "<html>done</html>",
  );
  assert.equal(dechunk(enc.encode("5\r\nhello\r\n6\r\n wor")), null, "cut short");
  assert.equal(dechunk(enc.encode("5\r\nhello\r\n")), null, "no last chunk");
  // A chunk longer than its size says: its data is not followed by CRLF.
  assert.equal(dechunk(enc.encode("3\r\nabcXY1\r\nZ\r\n0\r\n\r\n")), null, "misframed");
});

Deno.test("record body: gzip, deflate (wrapped or raw), brotli, identity and empty bodies", async () => {
  const page = enc.encode("<html>" + "x".repeat(1000) + "</html>");
  const want = new TextDecoder().decode(page);
  assert.equal(text(await decodeBody(zlib.gzipSync(page), undefined, "gzip", MiB)), want);
  assert.equal(text(await decodeBody(zlib.deflateSync(page), undefined, "deflate", MiB)), want);
  assert.equal(text(await decodeBody(zlib.deflateRawSync(page), undefined, "deflate", MiB)), want);
  assert.equal(text(await decodeBody(zlib.brotliCompressSync(page), undefined, "br", MiB)), want);
  assert.equal(text(await decodeBody(page, undefined, "identity", MiB)), want);
  for (const ce of ["gzip", "deflate", "br"]) {
    assert.equal(
      text(await decodeBody(page, undefined, ce, MiB)),
      want,
      `${ce} stored decoded (probe EI)`,
    );
  }
  assert.equal(text(await decodeBody(new Uint8Array(), undefined, "gzip", MiB)), "");
  // gzip inside chunks, and the encoding named in Transfer-Encoding alone.
  const gz = zlib.gzipSync(page);
  const chunks = new Uint8Array([
    ...enc.encode(`${gz.length.toString(16)}\r\n`),
    ...gz,
    ...enc.encode("\r\n0\r\n\r\n"),
  ]);
  assert.equal(text(await decodeBody(chunks, "chunked", "gzip", MiB)), want);
  assert.equal(text(await decodeBody(gz, "gzip", undefined, MiB)), want);
});

Deno.test("record body: a body cut short when recorded, an unknown encoding, and one past the cap are refused", async () => {
  const page = enc.encode("<html>" + "y".repeat(5000) + "</html>");
  const gz = zlib.gzipSync(page);
  assert.match(
    text(await decodeBody(gz.subarray(0, gz.length >> 1), undefined, "gzip", MiB)),
    /unusable: holds a gzip body cut short/,
  );
  assert.match(
    text(await decodeBody(gz, undefined, "zstd", MiB)),
    /unusable: is encoded as zstd/,
  );
  // 64 MiB of zeros in 64 KB of gzip, in one chunk: refused at the cap, never inflated whole.
  const bomb = zlib.gzipSync(new Uint8Array(64 * MiB));
  const chunked = new Uint8Array([
    ...enc.encode(`${bomb.length.toString(16)}\r\n`),
    ...bomb,
    ...enc.encode("\r\n0\r\n\r\n"),
  ]);
  const before = Deno.memoryUsage().rss;
  assert.match(
    text(await decodeBody(chunked, "chunked", "gzip", 8 * MiB)),
    /unusable: is larger than the 8 MiB/,
  );
  assert.ok(Deno.memoryUsage().rss - before < 48 * MiB, "not inflated whole");
  // Just past the cap is past it: a page of 9 MiB under a cap of 8.
  assert.match(
    text(await decodeBody(zlib.gzipSync(new Uint8Array(9 * MiB)), undefined, "gzip", 8 * MiB)),
    /unusable: is larger than the 8 MiB/,
  );
});

Deno.test("record body: a brotli stream cut short is refused, and a million one-byte chunks are read whole (probe EI)", async () => {
  const page = enc.encode("<html>" + "abcdefghij".repeat(20_000) + "</html>");
  const br = zlib.brotliCompressSync(page);
  for (const share of [0.5, 0.9, 0.99]) {
    const cut = br.subarray(0, Math.floor(br.length * share));
    assert.match(
      text(await decodeBody(cut, undefined, "br", MiB)),
      /unusable: holds a br body cut short/,
      `${share}`,
    );
  }
  const data = new Uint8Array(1_000_000).fill(120);
  const chunked = new Uint8Array(data.length * 6 + 5);
  let at = 0;
  for (const byte of data) chunked.set([49, 13, 10, byte, 13, 10], (at += 6) - 6);
  chunked.set(enc.encode("0\r\n\r\n"), at);
  const got = await decodeBody(chunked, "chunked", undefined, 8 * MiB);
  assert.ok("body" in got && got.body.length === data.length && got.body.every((b) => b === 120));
});

Deno.test("record body: every corpus page stored decoded under a gzip, deflate or br header is read as it is (probe EK)", async () => {
  let pages = 0;
  for (const dir of Deno.readDirSync("/work/shared/corpus")) {
    if (!dir.isDirectory) continue;
    for (const f of Deno.readDirSync(`/work/shared/corpus/${dir.name}`)) {
      if (!f.name.endsWith(".html")) continue;
      const page = Deno.readFileSync(`/work/shared/corpus/${dir.name}/${f.name}`);
      for (const ce of ["gzip", "deflate", "br"]) {
        const got = await decodeBody(page, undefined, ce, 8 * MiB);
        assert.ok("body" in got && got.body.length === page.length, `${f.name} as ${ce}`);
      }
      pages++;
    }
  }
  assert.ok(pages > 80, `${pages} pages`);
});

Deno.test("record body: a UTF-16 page (either byte order) stored decoded under a deflate or br header is read as it is", async () => {
  const page = "<html>ok</html>";
  const le = new Uint8Array([0xff, 0xfe, ...[...page].flatMap((c) => [c.charCodeAt(0), 0])]);
  const be = new Uint8Array([0xfe, 0xff, ...[...page].flatMap((c) => [0, c.charCodeAt(0)])]);
  for (const [name, body] of [["UTF-16LE", le], ["UTF-16BE", be]] as const) {
    for (const ce of ["deflate", "br"]) {
      const got = await decodeBody(body, undefined, ce, MiB);
      assert.ok("body" in got, `${name} as ${ce}: ${text(got)}`);
      assert.deepEqual(got.body, body, `${name} as ${ce}`);
    }
  }
});

Deno.test("record body: a chunk-size line is read strictly (at most 8 hex digits, then CRLF, ';' or white space, within 1 KiB)", async () => {
  const same = (s: string) => {
    const b = enc.encode(s);
    assert.equal(dechunk(b), b, `taken as already de-chunked: ${JSON.stringify(s.slice(0, 40))}`);
  };
  // Nine digits are no chunk size: the body is taken as stored de-chunked, and is misframed later.
  same("000000005\r\nhello\r\n0\r\n\r\n");
  assert.equal(dechunk(enc.encode("1\r\na\r\n000000005\r\nhello\r\n0\r\n\r\n")), null);
  assert.equal(
    text(await decodeBody(enc.encode("00000005\r\nhello\r\n0\r\n\r\n"), "chunked", undefined, MiB)),
    "hello",
  );
  // An extension running past 1 KiB ends no size line.
  same(`5;${"x".repeat(2000)}\r\nhello\r\n0\r\n\r\n`);
  assert.equal(dechunk(enc.encode(`5;${"x".repeat(500)}\r\nhello\r\n0\r\n\r\n`))?.length, 5);
  assert.equal(dechunk(enc.encode(`1\r\na\r\n5;${"x".repeat(2000)}\r\nhello\r\n0\r\n\r\n`)), null);
  // Other bytes after the digits: no size line.
  same("5x\r\nhello\r\n0\r\n\r\n");
  assert.equal(dechunk(enc.encode("1\r\na\r\n5x\r\nhello\r\n0\r\n\r\n")), null);
  assert.equal(dechunk(enc.encode("5 \r\nhello\r\n0\r\n\r\n"))?.length, 5);
  // A page stored de-chunked whose text begins with hex letters is served as it is.
  assert.equal(
    text(await decodeBody(enc.encode("Failed to load\r\nretry later"), "chunked", undefined, MiB)),
    "Failed to load\r\nretry later",
  );
});
