/**
 * A replay archive is the operator's file, and read as hostile as a live page (probe CP): a record
 * is read no further than the 8 MiB a live page may have, so a small file of gzip cannot hold
 * gigabytes in memory, and a record cut short in the file is not served as a whole page. Both are
 * uncharged 502s; the archive's other records still answer.
 */
import assert from "node:assert/strict";
import { startRig } from "./upstream_harness.ts";
import { fixture } from "./fixture.ts";
import { ArchiveTransport } from "../upstream/archive_transport.ts";
import { ApiError } from "../core/api_error.ts";
import { evalKilledAfter } from "./child_eval.ts";

const encoder = new TextEncoder();

async function gzip(bytes: Uint8Array): Promise<Uint8Array> {
  const stream = new Blob([bytes as Uint8Array<ArrayBuffer>]).stream()
    .pipeThrough(new CompressionStream("gzip"));
  return new Uint8Array(await new Response(stream).arrayBuffer());
}

/** A product page's HTTP head as recorded. */
const html = "HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\n";

/** Runs `test` with a folder for archive files, removed after, and the product page they hold. */
async function inArchiveDir(test: (dir: string, page: Uint8Array) => Promise<void>) {
  const dir = await Deno.makeTempDir();
  try {
    await test(dir, encoder.encode(await fixture("product/amazon.com__app-B07H57DNVV.html")));
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

/** One WARC response record; `cutTo` keeps only that many bytes of its HTTP block. */
function record(url: string, head: string, body: Uint8Array, cutTo?: number): Uint8Array {
  return warcRecord(
    "response",
    url,
    new Uint8Array([...encoder.encode(head + "\r\n"), ...body]),
    cutTo,
  );
}

/** One WARC record of `type` holding `block`, of which `cutTo` keeps only that many bytes. */
function warcRecord(type: string, url: string, block: Uint8Array, cutTo?: number): Uint8Array {
  const kept = cutTo === undefined ? block : block.subarray(0, cutTo);
  const msgtype = type === "request" ? "request" : "response";
  const warc = encoder.encode(
    `WARC/1.0\r\nWARC-Type: ${type}\r\n` +
      `WARC-Target-URI: ${url}\r\nWARC-Date: 2026-01-01T00:00:00Z\r\n` +
      `WARC-Record-ID: <urn:uuid:${crypto.randomUUID()}>\r\n` +
      `Content-Type: application/http; msgtype=${msgtype}\r\n` +
      `Content-Length: ${block.length}\r\n\r\n`,
  );
  return new Uint8Array([
    ...warc,
    ...kept,
    ...(cutTo === undefined ? encoder.encode("\r\n\r\n") : []),
  ]);
}

Deno.test("archive: a record over 8 MiB once decompressed, and one cut short, are uncharged 502s; the rest answer", async () => {
  await inArchiveDir(async (dir, page) => {
    const bomb = await gzip(new Uint8Array(64 * 1024 * 1024)); // 64 MiB of zeros, 64 KB of gzip
    await Deno.writeFile(
      `${dir}/a.warc`,
      record("https://www.amazon.com/dp/B07H57DNVV", html, page),
    );
    await Deno.writeFile(
      `${dir}/b.warc`,
      record(
        "https://www.amazon.com/dp/B0BOMB0001",
        `${html}Content-Encoding: gzip\r\nContent-Length: ${bomb.length}\r\n`,
        bomb,
      ),
    );
    // A gzip body cut short: the file ends in the middle of its record.
    const zipped = await gzip(page);
    await Deno.writeFile(
      `${dir}/c0.warc`,
      record(
        "https://www.amazon.com/dp/B0CUTGZIP1",
        `${html}Content-Encoding: gzip\r\nContent-Length: ${zipped.length}\r\n`,
        zipped,
        zipped.length / 2,
      ),
    );
    // Last in the folder: the file ends in the middle of this record's body.
    await Deno.writeFile(
      `${dir}/c.warc`,
      record(
        "https://www.amazon.com/dp/B0CUT00001",
        `${html}Content-Length: ${page.length}\r\n`,
        page,
        page.length / 2,
      ),
    );
    await using rig = await startRig({ upstream: `archive:${dir}` });
    const bombed = await rig.call("/v1/products/details?asin=B0BOMB0001");
    assert.equal(bombed.status, 502, JSON.stringify(bombed.body));
    assert.match(JSON.stringify(bombed.body), /larger than the 8 MiB/);
    assert.equal(bombed.headers.get("x-credits-cost"), "0");
    for (const asin of ["B0CUT00001", "B0CUTGZIP1"]) {
      const cut = await rig.call(`/v1/products/details?asin=${asin}`);
      assert.equal(cut.status, 502, `${asin}: ${JSON.stringify(cut.body).slice(0, 300)}`);
      assert.match(JSON.stringify(cut.body), /cut short/, asin);
      assert.equal(cut.headers.get("x-credits-cost"), "0");
    }
    const whole = await rig.call("/v1/products/details?asin=B07H57DNVV");
    assert.equal(whole.status, 200, JSON.stringify(whole.body).slice(0, 300));
    assert.equal(
      ((await rig.call("/v1/usage")).body as { requests_used: number }).requests_used,
      1,
    );
  });
});

/** A WARC record of another kind than response, its content cut to `cutTo` bytes when given. */
function otherRecord(type: string, content: string, cutTo?: number): Uint8Array {
  return warcRecord(type, "https://www.amazon.com/dp/B07H57DNVV", encoder.encode(content), cutTo);
}

Deno.test("archive: a file that ends inside a record of any kind is read up to it (probe DZ: the server spun for good)", async () => {
  await inArchiveDir(async (dir, page) => {
    const request = "GET /dp/B07H57DNVV HTTP/1.1\r\nHost: www.amazon.com\r\n\r\n";
    await Deno.writeFile(
      `${dir}/a.warc`,
      new Uint8Array([
        ...record("https://www.amazon.com/dp/B07H57DNVV", html, page),
        ...otherRecord("request", request, 20),
      ]),
    );
    await Deno.writeFile(`${dir}/b.warc`, otherRecord("metadata", "via: x\r\n".repeat(100), 10));
    // In a child process: warcio's skip of such a record never yields, so it froze the process
    // that read it, timers and all, and a test in this one would never end.
    const code = `
      import { ArchiveTransport } from ${
      JSON.stringify(import.meta.resolve("../upstream/archive_transport.ts"))
    };
      const t = new ArchiveTransport(${JSON.stringify(dir)});
      const r = await t.fetch({ url: "https://www.amazon.com/dp/B07H57DNVV" });
      console.log(r.status, r.body.length);`;
    const { stdout, stderr } = await evalKilledAfter(code);
    assert.equal(stdout, `200 ${page.length}`, stderr);
  });
});

Deno.test("archive: a record it cannot use is skipped, records past its budget not read, an unreadable archive logged and not told to clients (probes DZ, EL)", async () => {
  await inArchiveDir(async (dir, page) => {
    await Deno.writeFile(
      `${dir}/a.warc`,
      new Uint8Array([
        ...record("http://[::1", html, page), // no URL: every call was a 502
        ...record("https://www.amazon.com/dp/B07H57DNVV", html, page),
        ...record("https://www.amazon.com/dp/B0SECOND01", html, page),
      ]),
    );
    const lines: Record<string, unknown>[] = [];
    // One page and what its entry keeps beside it (headers, URLs, the entry itself).
    const held = page.length + 4096;
    const archive = new ArchiveTransport(dir, (l) => lines.push(l), { held, read: 1 << 30 });
    const first = await archive.fetch({ url: "https://www.amazon.com/dp/B07H57DNVV" } as never);
    assert.equal(first.status, 200);
    await assert.rejects(
      archive.fetch({ url: "https://www.amazon.com/dp/B0SECOND01" } as never),
      (e) => e instanceof ApiError && e.status === 502 && /holds no response/.test(e.message),
    );
    assert.equal(lines.length, 1);
    const { unread, ...counts } = lines[0] as { unread: string[] };
    assert.deepEqual(counts, { event: "archive_loaded", records: 1, skipped: 1 });
    assert.match(unread.join("\n"), /a\.warc: the archive holds more than/);

    // One URL recorded again and again is one entry: the budget counts it once (probe EN).
    const again = `${dir}/again`;
    await Deno.mkdir(again);
    const copies = Array.from(
      { length: 5 },
      () => record("https://www.amazon.com/dp/B07H57DNVV", html, page),
    );
    await Deno.writeFile(
      `${again}/a.warc`,
      new Uint8Array(
        [...copies, record("https://www.amazon.com/dp/B0SECOND01", html, page)].flatMap((r) => [
          ...r,
        ]),
      ),
    );
    const twice = new ArchiveTransport(again, () => {}, { held: 3 * held, read: 1 << 30 });
    const second = await twice.fetch({ url: "https://www.amazon.com/dp/B0SECOND01" } as never);
    assert.equal(second.status, 200);

    const missing = `${dir}/none.warc`;
    const logged: Record<string, unknown>[] = [];
    const gone = new ArchiveTransport(missing, (l) => logged.push(l));
    for (let i = 0; i < 2; i++) {
      await assert.rejects(
        gone.fetch({ url: "https://www.amazon.com/dp/B07H57DNVV" } as never),
        (e) => e instanceof ApiError && e.status === 502 && !e.message.includes(dir),
      );
      if (i === 0) await Deno.copyFile(`${dir}/a.warc`, missing); // read once, not per call
    }
    assert.equal(logged.length, 1);
    assert.equal(logged[0].event, "archive_unreadable");
    assert.match(String(logged[0].error), /none\.warc/);
  });
});

Deno.test("archive: header blocks are bounded, a record without a numeric length ends its file's reading, and a body cut short when recorded is refused (probe ED)", async () => {
  await inArchiveDir(async (dir, page) => {
    const good = record("https://www.amazon.com/dp/B07H57DNVV", html, page);
    // warcio holds a header block whole until its blank line: 400 MiB took 3.4 GB.
    const big = record(
      "https://www.amazon.com/dp/B0BIGHEAD1",
      `${html}X-Pad: ${"a".repeat(2 * 1024 * 1024)}\r\n`,
      page,
    );
    await Deno.writeFile(`${dir}/a.warc`, new Uint8Array([...good, ...big]));
    const lengthless = (length: string) =>
      encoder.encode(
        `WARC/1.0\r\nWARC-Type: metadata\r\nWARC-Target-URI: https://www.amazon.com/\r\n` +
          `Content-Length: ${length}\r\n\r\nvia: x\r\n\r\n\r\n`,
      );
    await Deno.writeFile(
      `${dir}/b.warc`,
      new Uint8Array([
        ...record("https://www.amazon.com/dp/B0BEFORE01", html, page),
        ...lengthless("-99999"),
        ...record("https://www.amazon.com/dp/B0AFTER001", html, page),
      ]),
    );
    await Deno.writeFile(
      `${dir}/c.warc`,
      new Uint8Array([
        ...lengthless("abc"),
        ...record("https://www.amazon.com/dp/B0AFTER002", html, page),
      ]),
    );
    // Whole records whose bodies were cut when recorded: gzip without its end, chunked without
    // its last chunk.
    const zipped = await gzip(page);
    const half = zipped.subarray(0, zipped.length >> 1);
    const chunked = new Uint8Array([
      ...encoder.encode(`${(page.length >> 1).toString(16)}\r\n`),
      ...page.subarray(0, page.length >> 1),
      ...encoder.encode("\r\n"),
    ]);
    await Deno.writeFile(
      `${dir}/d.warc`,
      new Uint8Array([
        ...record(
          "https://www.amazon.com/dp/B0GZIPCUT1",
          `${html}Content-Encoding: gzip\r\nContent-Length: ${half.length}\r\n`,
          half,
        ),
        ...record(
          "https://www.amazon.com/dp/B0CHUNKCUT",
          `${html}Transfer-Encoding: chunked\r\n`,
          chunked,
        ),
        ...record(
          "https://www.amazon.com/dp/B0GZIPWHOL",
          `${html}Content-Encoding: gzip\r\nContent-Length: ${zipped.length}\r\n`,
          zipped,
        ),
      ]),
    );
    const lines: Record<string, unknown>[] = [];
    const archive = new ArchiveTransport(dir, (l) => lines.push(l));
    const get = (asin: string) =>
      archive.fetch({ url: `https://www.amazon.com/dp/${asin}` } as never).then(
        (r) => `${r.status} ${r.body.length}`,
        (e) => (e as Error).message,
      );
    assert.equal(await get("B07H57DNVV"), `200 ${page.length}`);
    assert.equal(await get("B0BEFORE01"), `200 ${page.length}`);
    assert.equal(await get("B0GZIPWHOL"), `200 ${page.length}`);
    for (const asin of ["B0BIGHEAD1", "B0AFTER001", "B0AFTER002"]) {
      assert.match(await get(asin), /holds no response/, asin);
    }
    for (const asin of ["B0GZIPCUT1", "B0CHUNKCUT"]) {
      assert.match(await get(asin), /cut short/, asin);
    }
    const unread = (lines[0] as { unread: string[] }).unread.join("\n");
    assert.match(unread, /a\.warc: a record's headers are longer than 1 MiB/);
    assert.match(unread, /b\.warc: a record's Content-Length is "-99999"/);
    assert.match(unread, /c\.warc: a record's Content-Length is "abc"/);
  });
});

Deno.test("archive: a record cut short by a few bytes of its WARC length is an uncharged 502, not a page (probes CO, CR)", async () => {
  await inArchiveDir(async (dir, page) => {
    await Deno.writeFile(
      `${dir}/a.warc`,
      record("https://www.amazon.com/dp/B07H57DNVV", html, page),
    );
    // No HTTP Content-Length, no encoding: only the WARC record's length tells the bytes missing.
    // The body's reader names how many (the later check that the file ended inside the record
    // refuses it too, but can only say "cut short"), so the message pins the body's own check.
    const block = encoder.encode(html + "\r\n").length + page.length;
    await Deno.writeFile(
      `${dir}/b.warc`,
      record("https://www.amazon.com/dp/B0CUTFEW01", html, page, block - 5),
    );
    await using rig = await startRig({ upstream: `archive:${dir}` });
    const cut = await rig.call("/v1/products/details?asin=B0CUTFEW01");
    assert.equal(cut.status, 502, JSON.stringify(cut.body).slice(0, 300));
    assert.match(JSON.stringify(cut.body), /cut short \(5 bytes missing\)/);
    assert.equal(cut.headers.get("x-credits-cost"), "0");
    const whole = await rig.call("/v1/products/details?asin=B07H57DNVV");
    assert.equal(whole.status, 200, JSON.stringify(whole.body).slice(0, 300));
    assert.equal(
      ((await rig.call("/v1/usage")).body as { requests_used: number }).requests_used,
      1,
    );
  });
});

Deno.test("archive: header bytes count against the held budget: records of large headers and small bodies stop the reading (probe EL)", async () => {
  await inArchiveDir(async (dir) => {
    // Ten records of 300 KB of headers each (under the 1 MiB header bound) and a tiny body.
    const pad = `X-Pad: ${"a".repeat(300_000)}\r\n`;
    const asins = Array.from({ length: 10 }, (_, i) => `B0HEADS${String(i).padStart(3, "0")}`);
    await Deno.writeFile(
      `${dir}/a.warc`,
      new Uint8Array(
        asins.flatMap((asin) => [
          ...record(
            `https://www.amazon.com/dp/${asin}`,
            html + pad,
            encoder.encode("<html></html>"),
          ),
        ]),
      ),
    );
    const lines: Record<string, unknown>[] = [];
    // 2 MiB held: the headers (kept as two bytes a character) fill it after three records.
    const archive = new ArchiveTransport(dir, (l) => lines.push(l), {
      held: 2 * 1024 * 1024,
      read: 1 << 30,
    });
    const got = await Promise.all(
      asins.map((asin) =>
        archive.fetch({ url: `https://www.amazon.com/dp/${asin}` } as never).then(
          (r) => r.status,
          (e) => (e as Error).message,
        )
      ),
    );
    assert.deepEqual(got.slice(0, 3), [200, 200, 200]);
    assert.match(String(got[9]), /holds no response/);
    const { records, unread } = lines[0] as { records: number; unread: string[] };
    assert.ok(records >= 3 && records < 10, `${records} records held`);
    assert.match(unread.join("\n"), /a\.warc: the archive holds more than the 2 MiB/);
  });
});

Deno.test("archive: the read limit is one for all its files, and reading stops at the file that passes it", async () => {
  await inArchiveDir(async (dir) => {
    const body = encoder.encode(`<html>${"b".repeat(1_000_000)}</html>`);
    await Deno.writeFile(
      `${dir}/a.warc`,
      record("https://www.amazon.com/dp/B0FILEA001", html, body),
    );
    await Deno.writeFile(
      `${dir}/b.warc`,
      record("https://www.amazon.com/dp/B0FILEB001", html, body),
    );
    await Deno.writeFile(
      `${dir}/c.warc`,
      record("https://www.amazon.com/dp/B0FILEC001", html, encoder.encode("<html></html>")),
    );
    const lines: Record<string, unknown>[] = [];
    // Each file alone is within 1.5 MB; the first two together are not.
    const archive = new ArchiveTransport(dir, (l) => lines.push(l), {
      held: 1 << 30,
      read: 1_500_000,
    });
    const get = (asin: string) =>
      archive.fetch({ url: `https://www.amazon.com/dp/${asin}` } as never).then(
        (r) => `${r.status} ${r.body.length}`,
        (e) => (e as Error).message,
      );
    assert.equal(await get("B0FILEA001"), `200 ${body.length}`);
    assert.match(await get("B0FILEB001"), /holds no response/);
    assert.match(await get("B0FILEC001"), /holds no response/);
    const { records, unread } = lines[0] as { records: number; unread: string[] };
    assert.equal(records, 1);
    assert.equal(unread.length, 1, unread.join("\n"));
    assert.match(unread[0], /b\.warc: the archive is larger than the/);
  });
});

Deno.test("archive: a record one byte short is an uncharged 502: of its WARC length, or of its HTTP Content-Length", async () => {
  await inArchiveDir(async (dir, page) => {
    await Deno.writeFile(
      `${dir}/a.warc`,
      new Uint8Array([
        ...record("https://www.amazon.com/dp/B07H57DNVV", html, page),
        // Whole in the file, but its body one byte short of the Content-Length recorded with it.
        ...record(
          "https://www.amazon.com/dp/B0SHORTHTP",
          `${html}Content-Length: ${page.length}\r\n`,
          page.subarray(0, page.length - 1),
        ),
      ]),
    );
    // The file ends one byte before the record's WARC length: no HTTP length, no encoding.
    const block = encoder.encode(html + "\r\n").length + page.length;
    await Deno.writeFile(
      `${dir}/b.warc`,
      record("https://www.amazon.com/dp/B0SHORTWRC", html, page, block - 1),
    );
    await using rig = await startRig({ upstream: `archive:${dir}` });
    const warc = await rig.call("/v1/products/details?asin=B0SHORTWRC");
    assert.equal(warc.status, 502, JSON.stringify(warc.body).slice(0, 300));
    assert.match(JSON.stringify(warc.body), /cut short \(1 bytes missing\)/);
    assert.equal(warc.headers.get("x-credits-cost"), "0");
    const http = await rig.call("/v1/products/details?asin=B0SHORTHTP");
    assert.equal(http.status, 502, JSON.stringify(http.body).slice(0, 300));
    assert.match(
      JSON.stringify(http.body),
      new RegExp(`cut short \\(${page.length - 1} of its ${page.length} bytes\\)`),
    );
    assert.equal(http.headers.get("x-credits-cost"), "0");
    const whole = await rig.call("/v1/products/details?asin=B07H57DNVV");
    assert.equal(whole.status, 200, JSON.stringify(whole.body).slice(0, 300));
    assert.equal(
      ((await rig.call("/v1/usage")).body as { requests_used: number }).requests_used,
      1,
    );
  });
});

Deno.test("archive: a recorded answer that says it led off its marketplace is an uncharged 502; one that led within it answers as that page (probe HE)", async () => {
  await inArchiveDir(async (dir, page) => {
    const led = (url: string, to: string) => {
      const bytes = new TextDecoder().decode(record(url, html, page));
      return encoder.encode(
        bytes.replace("WARC-Date:", `WARC-Refers-To-Target-URI: ${to}\r\nWARC-Date:`),
      );
    };
    await Deno.writeFile(
      `${dir}/a.warc`,
      new Uint8Array([
        ...led("https://www.amazon.com/dp/B0000000A1", "http://169.254.169.254/latest/meta-data/"),
        ...led("https://www.amazon.com/dp/B0000000A2", "javascript:alert(1)"),
        ...led("https://www.amazon.com/dp/B0000000A3", "https://www.amazon.de/dp/B07H57DNVV"),
        ...led("https://www.amazon.com/dp/B0000000A4", "https://www.amazon.com/dp/B07H57DNVV"),
      ]),
    );
    await using rig = await startRig({ upstream: `archive:${dir}` });
    const scrape = (asin: string) =>
      rig.call(`/v1/scrape?url=${encodeURIComponent(`https://www.amazon.com/dp/${asin}`)}`);
    for (const asin of ["B0000000A1", "B0000000A2", "B0000000A3"]) {
      const r = await scrape(asin);
      assert.equal(r.status, 502, `${asin}: ${JSON.stringify(r.body).slice(0, 300)}`);
      assert.match(JSON.stringify(r.body), /led to a page off its marketplace/, asin);
      assert.equal(r.headers.get("x-credits-cost"), "0", asin);
    }
    const within = await scrape("B0000000A4");
    assert.equal(within.status, 200, JSON.stringify(within.body).slice(0, 300));
    assert.equal(within.body.url, "https://www.amazon.com/dp/B07H57DNVV");
    assert.equal(within.body.marketplace, "US");
  });
});

Deno.test("archive: a folder's symlinks to WARC files are read; one to a FIFO or a device is passed over (probe HE)", async () => {
  await inArchiveDir(async (dir, page) => {
    const elsewhere = await Deno.makeTempDir();
    try {
      await Deno.writeFile(
        `${elsewhere}/real.warc`,
        record("https://www.amazon.com/dp/B07H57DNVV", html, page),
      );
      await Deno.symlink(`${elsewhere}/real.warc`, `${dir}/linked.warc`);
      await Deno.symlink("/dev/zero", `${dir}/zero.warc`);
      const fifo = new Deno.Command("mkfifo", { args: [`${elsewhere}/pipe`] });
      assert.equal((await fifo.output()).code, 0);
      await Deno.symlink(`${elsewhere}/pipe`, `${dir}/pipe.warc`);
      const lines: Record<string, unknown>[] = [];
      const archive = new ArchiveTransport(dir, (l) => lines.push(l));
      const r = await archive.fetch({ url: "https://www.amazon.com/dp/B07H57DNVV" } as never);
      assert.equal(r.status, 200);
      assert.deepEqual(lines, [{ event: "archive_loaded", records: 1 }]);
    } finally {
      await Deno.remove(elsewhere, { recursive: true });
    }
  });
});

Deno.test("archive: the loader gives the server turns while it reads a file of many small records (probe HE: /healthz held for 40 s)", async () => {
  await inArchiveDir(async (dir) => {
    // 30,000 tiny records for one URL in 45 KB of gzip: each compressed chunk the loader reads
    // unpacks into thousands of records, all parsed without another read.
    const one = record("https://www.amazon.com/dp/B07H57DNVV", html, encoder.encode("hi"));
    const many = new Uint8Array(one.length * 30_000);
    for (let i = 0; i < 30_000; i++) many.set(one, i * one.length);
    await Deno.writeFile(`${dir}/many.warc.gz`, await gzip(many));
    // Turns of the event loop while the archive loads, counted by a chain of timers: each is
    // what a request waiting to be answered would get.
    let turns = 0;
    let loading = true;
    const tick = () => {
      if (!loading) return;
      turns++;
      setTimeout(tick, 0);
    };
    setTimeout(tick, 0);
    const lines: Record<string, unknown>[] = [];
    await new Promise<void>((loaded) => {
      new ArchiveTransport(dir, (l) => {
        lines.push(l);
        loaded();
      });
    });
    loading = false;
    assert.deepEqual(lines, [{ event: "archive_loaded", records: 1 }]);
    // One turn every 10 ms of reading; the 30,000 records take far longer than 200 ms to read
    // (about 1.4 s here: 139 turns). Without them, the timers ran only while the file's three
    // chunks were read from disk (3 turns).
    assert.ok(turns >= 20, `${turns} turns while loading`);
  });
});
