import assert from "node:assert/strict";
import { queryParams, queryValue } from "../routes/query_params.ts";

const base = "http://127.0.0.1:8000/v1/products/offers";

function grouped(params: URLSearchParams): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const [k, v] of params) out.set(k, [...(out.get(k) ?? []), v]);
  return out;
}

Deno.test("queryParams() reads a query exactly as new URL().searchParams does", () => {
  const queries = [
    "",
    "?",
    "?&&",
    "?=",
    "?asin=B07H57DNVV",
    "?asin=B07H57DNVV&marketplace=US&page=2",
    "??asin=x",
    "?a=1&a=2&&b&=c&d=&e==f",
    "?q=red+shoes&q2=red%20shoes&q3=%2B&q+4=%2b+",
    "?q=%E2%82%AC%F0%9F%98%80&k%C3%A9=%c3%a9",
    "?q=%zz%&x=1",
    "?half=%E2&x=1",
    "?lone=%ED%A0%80",
    "?q=é€😀&k=\u00e9",
    "?q=a#frag&b=2",
    "?q=a&b=2#",
    "?q=a\tb&c\n=d\r",
    "?q=<script>\"'` |{}",
    "?api_key=shelf_live_" + "ab".repeat(24) + "&api_key=second",
    "?%61sin=x&asin%3D=y",
    "?q=" + "x".repeat(5000),
  ];
  for (const q of queries) {
    const url = base + q;
    assert.deepEqual(queryParams(url), grouped(new URL(url).searchParams), JSON.stringify(q));
  }
});

Deno.test("queryValue() gives the LAST of a name's values, as c.req.query does", () => {
  assert.equal(queryValue(`${base}?email=a@x.test&email=b@x.test`, "email"), "b@x.test");
  assert.equal(queryValue(`${base}?asin=A&marketplace=US&asin=B&asin=C`, "asin"), "C");
  assert.equal(queryValue(`${base}?asin=only`, "asin"), "only");
  assert.equal(queryValue(`${base}?asin=A`, "page"), undefined);
});
