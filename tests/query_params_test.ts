import assert from "node:assert/strict";
import { queryParams } from "../routes/query_params.ts";

const base = "http://127.0.0.1:8000/v1/products/offers";

Deno.test("queryParams() reads a query exactly as new URL().searchParams does", () => {
  const queries = [
    "",
    "?",
    "?asin=B07H57DNVV",
    "?asin=B07H57DNVV&marketplace=US&page=2",
    "??asin=x",
    "?a=1&a=2&&b&=c&d=",
    "?q=red+shoes&q2=red%20shoes&q3=%2B",
    "?q=%E2%82%AC%F0%9F%98%80&bad=%zz%&half=%E2",
    "?q=é€😀&k=\u00e9",
    "?q=a#frag&b=2",
    "?q=<script>\"'`",
    "?api_key=shelf_live_" + "ab".repeat(24),
    "?%61sin=x&asin%3D=y",
    "?q=" + "x".repeat(5000),
  ];
  for (const q of queries) {
    const url = base + q;
    assert.deepEqual([...queryParams(url)], [...new URL(url).searchParams], JSON.stringify(q));
  }
});
