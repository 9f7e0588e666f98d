/**
 * An answer is checked before it is paid for (upstream/checked_answer.ts): what is sent and
 * charged is the response schema's reading of it, at most MAX_ANSWER_CHARS bytes of JSON, and an
 * answer its schema refuses is an uncharged 502 that the operator's error log names. Real server
 * on loopback; the data source answers offers with the body each test gives it.
 */
import assert from "node:assert/strict";
import { ControlledSource, startServer } from "./test_server.ts";
import type { DataRequest } from "../upstream/data_source.ts";
import { MAX_ANSWER_CHARS } from "../upstream/page_read.ts";

/** Answers offers with the test source's valid body, changed by `edit`. */
class EditedSource extends ControlledSource {
  edit: (body: Record<string, unknown>) => Record<string, unknown> = (b) => b;
  override async fetch(req: DataRequest) {
    return this.edit(await super.fetch(req) as Record<string, unknown>);
  }
}

const bytes = (s: string) => new TextEncoder().encode(s).byteLength;

Deno.test("an answer of exactly the bound in bytes of JSON is sent and charged, one byte more is an uncharged 502", async () => {
  const source = new EditedSource();
  await using s = await startServer({ source });
  const { key } = await s.account("starter");
  let n = 0;
  // The url padded with `fill` (1 or 2 bytes a character) to make the answer `total` bytes.
  const call = async (fill: string, total: number) => {
    const asin = `B0BOUND${String(++n).padStart(3, "0")}`;
    source.edit = (body) => {
      const room = total - bytes(JSON.stringify({ ...body, url: "" }));
      const url = fill.repeat(Math.floor(room / bytes(fill))) + "x".repeat(room % bytes(fill));
      return { ...body, url };
    };
    const r = await s.get(`/v1/products/offers?asin=${asin}`, key);
    return { r, text: await r.text() };
  };
  for (const fill of ["x", "é"]) {
    const { r, text } = await call(fill, MAX_ANSWER_CHARS);
    assert.equal(r.status, 200, `${fill}: ${text.slice(0, 200)}`);
    assert.equal(r.headers.get("x-credits-cost"), "1");
    assert.equal(bytes(text), MAX_ANSWER_CHARS, `${fill}: the answer is the bound exactly`);
  }
  const over = await call("x", MAX_ANSWER_CHARS + 1);
  assert.equal(over.r.status, 502);
  assert.equal(JSON.parse(over.text).error.code, "upstream_error");
  assert.equal(over.r.headers.get("x-credits-cost"), "0");
});

Deno.test("an answer carries only what its schema names: a field the source added is not sent", async () => {
  const source = new EditedSource();
  // A field no schema names (here a session cookie) would be sent to the client and charged.
  source.edit = (body) => ({ ...body, session_cookie: "at-main=signed-in-token" });
  await using s = await startServer({ source });
  const { key } = await s.account("starter");
  const r = await s.get("/v1/products/offers?asin=B07H57DNVV", key);
  const text = await r.text();
  assert.equal(r.status, 200, text.slice(0, 300));
  assert.equal(r.headers.get("x-credits-cost"), "1");
  assert.doesNotMatch(text, /signed-in-token/);
  assert.deepEqual(JSON.parse(text), {
    url: "https://www.amazon.com/dp/B07H57DNVV",
    asin: "B07H57DNVV",
    count: 0,
    offers: [],
  });
});

Deno.test("an answer its schema refuses is an uncharged 502, and the error log names the endpoint", async () => {
  const source = new EditedSource();
  source.edit = (body) => ({ ...body, count: "none" });
  await using s = await startServer({ source });
  const { key } = await s.account("starter");
  const r = await s.get("/v1/products/offers?asin=B07H57DNVV", key);
  const body = await r.json();
  assert.equal(r.status, 502);
  assert.equal(body.error.code, "upstream_error");
  assert.equal(r.headers.get("x-credits-cost"), "0");
  // The operator's only sign that a parser yields what the schema does not take.
  assert.deepEqual(s.errors, ["response of /v1/products/offers failed its schema"]);
});
