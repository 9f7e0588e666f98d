/**
 * UPSTREAM_RECORD then `archive:`: a session recorded against the fake marketplace replays to the
 * very same responses with the marketplace gone; an unrecorded URL is a 502.
 */
import assert from "node:assert/strict";
import { startRig } from "./upstream_harness.ts";
import { FakeMarketplace } from "./fake_marketplace.ts";
import { fixture } from "./fixture.ts";

const CALLS = [
  "/v1/products/details?asin=B07H57DNVV",
  "/v1/products/search?query=katzenfutter&marketplace=DE",
  "/v1/products/offers?asin=B0BN72FYFG",
  "/v1/bestsellers?category=hi",
];

Deno.test("record then replay gives identical responses", async () => {
  const warc = await Deno.makeTempFile({ suffix: ".warc" });
  const recorded: unknown[] = [];
  {
    await using fake = new FakeMarketplace();
    fake.page("https://www.amazon.com/dp/B07H57DNVV", "product/amazon.com__app-B07H57DNVV.html")
      .page("https://www.amazon.de/s?k=katzenfutter", "search/amazon.de__parsy-katzenfutter.html")
      .page(
        "https://www.amazon.com/gp/product/ajax/?asin=B0BN72FYFG&pc=dp&experienceId=aodAjaxMain",
        "offers/amazon.com__wk-aod-main-B0BN72FYFG.html",
      )
      .page(
        "https://www.amazon.com/gp/bestsellers/hi",
        "bestsellers/amazon.com__parsy-zgbs-hi.html",
      );
    await using rig = await startRig({ fake, env: { UPSTREAM_RECORD: warc } });
    for (const c of CALLS) {
      const r = await rig.call(c);
      assert.equal(r.status, 200, c);
      recorded.push(r.body);
    }
  }
  const text = await Deno.readTextFile(warc);
  assert.equal(text.match(/^WARC\/1\.1\r$/gm)?.length, CALLS.length);
  assert.match(text, /WARC-Type: response/);
  assert.match(text, /WARC-Target-URI: https:\/\/www\.amazon\.de\/s\?k=katzenfutter/);

  await using replay = await startRig({ upstream: `archive:${warc}` });
  for (const [i, c] of CALLS.entries()) {
    const r = await replay.call(c);
    assert.equal(r.status, 200, c);
    assert.deepEqual(r.body, recorded[i], c);
  }
  // Tracking parameters and parameter order do not matter; an unrecorded page is a 502.
  const scraped = await replay.call(
    "/v1/scrape?url=" +
      encodeURIComponent("https://WWW.AMAZON.COM/gp/bestsellers/hi?ref=zg_bs_nav&pd_rd_w=x"),
  );
  assert.equal(scraped.status, 200);
  const missing = await replay.call("/v1/products/details?asin=B000000001");
  assert.equal(missing.status, 502);
  assert.equal(missing.headers.get("x-credits-cost"), "0");
  await Deno.remove(warc);
});

Deno.test("a recording that cannot be written is logged for the operator; the call is answered from its one upstream request", async () => {
  const dir = await Deno.makeTempDir();
  const warc = `${dir}/rec.warc`;
  const lines: Record<string, unknown>[] = [];
  await using fake = new FakeMarketplace();
  fake.page("https://www.amazon.com/dp/B07H57DNVV", "product/amazon.com__app-B07H57DNVV.html");
  await using rig = await startRig({
    fake,
    env: { UPSTREAM_RECORD: warc },
    browser: { log: (l) => lines.push(l) },
  });
  // The disk fills, or the file is made unwritable, after start-up: here a folder takes its place.
  await Deno.remove(warc).catch(() => {});
  await Deno.mkdir(warc);
  const r = await rig.call("/v1/products/details?asin=B07H57DNVV");
  assert.equal(r.status, 200, JSON.stringify(r.body).slice(0, 300));
  assert.equal(fake.pageRequests("/dp/"), 1, "not retried");
  assert.ok(lines.some((l) => l.event === "record_failed"), JSON.stringify(lines));
  assert.ok(!lines.some((l) => l.event === "upstream_retry"), JSON.stringify(lines));
  await Deno.remove(dir, { recursive: true });
});

Deno.test("a .warc.gz recording is gzip, record by record, and replays the same", async () => {
  const warc = await Deno.makeTempFile({ suffix: ".warc.gz" });
  let recorded: unknown;
  {
    await using fake = new FakeMarketplace();
    fake.page("https://www.amazon.com/dp/B07H57DNVV", "product/amazon.com__app-B07H57DNVV.html");
    await using rig = await startRig({ fake, env: { UPSTREAM_RECORD: warc } });
    const r = await rig.call(CALLS[0]);
    assert.equal(r.status, 200);
    recorded = r.body;
  }
  const bytes = await Deno.readFile(warc);
  assert.deepEqual([...bytes.slice(0, 2)], [0x1f, 0x8b], "a gzip member");
  const plain = await new Response(
    new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip")),
  ).text();
  assert.ok(bytes.length < plain.length / 2, `${bytes.length} bytes for ${plain.length}`);
  await using replay = await startRig({ upstream: `archive:${warc}` });
  const again = await replay.call(CALLS[0]);
  assert.equal(again.status, 200);
  assert.deepEqual(again.body, recorded);
  await Deno.remove(warc);
});

Deno.test("a recording stops at UPSTREAM_RECORD_MAX_MB, says so once, and calls are answered", async () => {
  const warc = await Deno.makeTempFile({ suffix: ".warc" });
  const lines: Record<string, unknown>[] = [];
  await using fake = new FakeMarketplace();
  const asins = ["B07H57DNVV", "B0000000A1", "B0000000A2", "B0000000A3", "B0000000A4"];
  for (const asin of asins) {
    fake.page(`https://www.amazon.com/dp/${asin}`, "product/amazon.com__app-B07H57DNVV.html");
  }
  await using rig = await startRig({
    fake,
    env: { UPSTREAM_RECORD: warc, UPSTREAM_RECORD_MAX_MB: "1" },
    browser: { log: (l) => lines.push(l) },
  });
  for (const asin of asins) {
    const r = await rig.call(`/v1/products/details?asin=${asin}`);
    assert.equal(r.status, 200, JSON.stringify(r.body).slice(0, 200));
  }
  const size = (await Deno.stat(warc)).size;
  assert.ok(size > 0 && size <= 1024 * 1024, `${size} bytes`);
  const full = lines.filter((l) => l.event === "record_full");
  assert.equal(full.length, 1, JSON.stringify(lines));
  // MiB, as README says: the operator sizes the disk by this number (10^6 would be another cap).
  assert.equal(full[0].max_bytes, 1024 * 1024);
  await Deno.remove(warc);
});

/** A temporary file removed when the test ends, whether it passed or not. */
async function tempFile(suffix: string) {
  const path = await Deno.makeTempFile({ suffix });
  return { path, [Symbol.asyncDispose]: () => Deno.remove(path).catch(() => {}) };
}

Deno.test("a recording holds no Set-Cookie: the marketplace's session cookies are never written to the file", async () => {
  await using file = await tempFile(".warc");
  const warc = file.path;
  let recorded: unknown;
  {
    await using fake = new FakeMarketplace();
    fake.page("https://www.amazon.com/dp/B07H57DNVV", {
      html: await fixture("product/amazon.com__app-B07H57DNVV.html"),
      // The marketplace renewing a signed-in session on the page's answer.
      headers: [
        ["set-cookie", "at-main=Atza|s3cretSESSION; Path=/; Secure; HttpOnly"],
        ["set-cookie", "sess-at-main=s3cretTOKEN; Path=/; Secure; HttpOnly"],
      ],
    });
    await using rig = await startRig({ fake, env: { UPSTREAM_RECORD: warc } });
    const r = await rig.call(CALLS[0]);
    assert.equal(r.status, 200, JSON.stringify(r.body).slice(0, 300));
    recorded = r.body;
  }
  const text = await Deno.readTextFile(warc);
  assert.equal(text.match(/^WARC\/1\.1\r$/gm)?.length, 1);
  assert.deepEqual(text.split("\r\n").filter((l) => /^set-cookie:/i.test(l)), []);
  assert.ok(!text.includes("s3cret"), "no session value in the file");
  // The page itself is still recorded, and replays the same.
  await using replay = await startRig({ upstream: `archive:${warc}` });
  const again = await replay.call(CALLS[0]);
  assert.equal(again.status, 200);
  assert.deepEqual(again.body, recorded);
});

Deno.test("a redirected page is recorded with where it led, and replays as live answered", async () => {
  await using file = await tempFile(".warc");
  const warc = file.path;
  const call = "/v1/scrape?url=" + encodeURIComponent("https://www.amazon.com/dp/B0CB1FW5FC");
  let recorded: Record<string, unknown>;
  {
    await using fake = new FakeMarketplace();
    // A merged product: its old ASIN's page redirects to the one the marketplace now shows.
    fake.redirect("https://www.amazon.com/dp/B0CB1FW5FC", "https://www.amazon.com/dp/B0G6KD54ZK")
      .page("https://www.amazon.com/dp/B0G6KD54ZK", "product/amazon.com__msheraz-B0G6KD54ZK.html");
    await using rig = await startRig({ fake, env: { UPSTREAM_RECORD: warc } });
    const r = await rig.call(call);
    assert.equal(r.status, 200, JSON.stringify(r.body).slice(0, 300));
    // Live, the answer names the page the marketplace answered with.
    assert.equal(r.body.url, "https://www.amazon.com/dp/B0G6KD54ZK");
    recorded = r.body;
  }
  const warcHeaders = (await Deno.readTextFile(warc)).split("\r\n")
    .filter((l) => l.startsWith("WARC-Target-URI:") || l.startsWith("WARC-Refers-To-Target-URI:"));
  assert.deepEqual(warcHeaders.sort(), [
    "WARC-Refers-To-Target-URI: https://www.amazon.com/dp/B0G6KD54ZK",
    "WARC-Target-URI: https://www.amazon.com/dp/B0CB1FW5FC",
  ]);
  await using replay = await startRig({ upstream: `archive:${warc}` });
  const again = await replay.call(call);
  assert.equal(again.status, 200);
  assert.equal(again.body.url, "https://www.amazon.com/dp/B0G6KD54ZK", "the redirect replayed");
  assert.deepEqual(again.body, recorded);
});

Deno.test("a recording file made again while running is the owner's alone (it holds pages fetched with the operator's cookies)", async () => {
  const dir = await Deno.makeTempDir();
  await using _dir = { [Symbol.asyncDispose]: () => Deno.remove(dir, { recursive: true }) };
  const warc = `${dir}/rec.warc`;
  await using fake = new FakeMarketplace();
  fake.page("https://www.amazon.com/dp/B07H57DNVV", "product/amazon.com__app-B07H57DNVV.html")
    .page("https://www.amazon.com/dp/B0000000A1", "product/amazon.com__app-B07H57DNVV.html");
  await using rig = await startRig({ fake, env: { UPSTREAM_RECORD: warc } });
  assert.equal((await rig.call("/v1/products/details?asin=B07H57DNVV")).status, 200);
  // The operator moves the recording away (rotation): the next answer starts a new file.
  await Deno.remove(warc);
  assert.equal((await rig.call("/v1/products/details?asin=B0000000A1")).status, 200);
  const mode = (await Deno.stat(warc)).mode! & 0o777;
  assert.equal(mode & 0o077, 0, `mode ${mode.toString(8)}: no group or other access`);
});

Deno.test("an answer the marketplace keeps blocking (503 on every try) is recorded too: failed calls make records", async () => {
  await using file = await tempFile(".warc");
  const warc = file.path;
  await using fake = new FakeMarketplace();
  fake.page("https://www.amazon.com/dp/B07H57DNVV", "product/amazon.com__app-B07H57DNVV.html")
    .fail("503", 100, "/dp/");
  await using rig = await startRig({ fake, env: { UPSTREAM_RECORD: warc } });
  const r = await rig.call(CALLS[0]);
  assert.equal(r.status, 503, JSON.stringify(r.body).slice(0, 300));
  assert.equal(r.headers.get("x-credits-cost"), "0");
  const text = await Deno.readTextFile(warc);
  // The answer the call ended on: the block page, as the marketplace sent it.
  assert.ok((text.match(/^WARC\/1\.1\r$/gm)?.length ?? 0) >= 1, `${text.length} bytes recorded`);
  assert.match(text, /WARC-Target-URI: https:\/\/www\.amazon\.com\/dp\/B07H57DNVV/);
  assert.match(text, /^HTTP\/1\.1 503 Service Unavailable\r$/m);
});
