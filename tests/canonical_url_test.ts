/**
 * The URL form replay archives are matched by (upstream/canonical_url.ts, INTERFACE.md "Replay
 * archives"): the same page reached with its parameters in another order, a fragment or
 * click-tracking finds the same recording.
 */
import assert from "node:assert/strict";
import { canonicalUrl } from "../upstream/canonical_url.ts";

Deno.test("canonicalUrl: a fragment is no part of the page", () => {
  assert.equal(
    canonicalUrl("https://www.amazon.com/dp/B07H57DNVV#customerReviews"),
    "https://www.amazon.com/dp/B07H57DNVV",
  );
  assert.equal(
    canonicalUrl("https://www.amazon.com/s?k=ipad#top"),
    canonicalUrl("https://www.amazon.com/s?k=ipad"),
  );
});

Deno.test("canonicalUrl: repeated parameters compare equal in any order (sorted by name, then value)", () => {
  const want = "https://www.amazon.com/s?i=electronics&k=ipad&rh=n%3A1&rh=p_36%3A1-2";
  for (
    const url of [
      "https://www.amazon.com/s?rh=p_36%3A1-2&k=ipad&rh=n%3A1&i=electronics",
      "https://www.amazon.com/s?rh=n%3A1&rh=p_36%3A1-2&i=electronics&k=ipad",
      "https://www.amazon.com/s?k=ipad&rh=p_36%3A1-2&i=electronics&rh=n%3A1&ref=sr_pg_1",
    ]
  ) {
    assert.equal(canonicalUrl(url), want, url);
  }
});

Deno.test("canonicalUrl: host case and tracking parameters do not matter; other parameters do", () => {
  assert.equal(
    canonicalUrl("https://WWW.Amazon.COM/gp/bestsellers/hi?ref=zg_bs_nav&pd_rd_w=x&th=1"),
    "https://www.amazon.com/gp/bestsellers/hi",
  );
  assert.notEqual(
    canonicalUrl("https://www.amazon.com/s?k=ipad&page=2"),
    canonicalUrl("https://www.amazon.com/s?k=ipad"),
  );
  assert.notEqual(
    canonicalUrl("https://www.amazon.com/s?k=a&k=b"),
    canonicalUrl("https://www.amazon.com/s?k=a"),
  );
});

Deno.test("canonicalUrl: a host written with a final dot is the same host (probe HF)", () => {
  assert.equal(
    canonicalUrl("https://WWW.AMAZON.COM./dp/B07H57DNVV"),
    canonicalUrl("https://www.amazon.com/dp/B07H57DNVV"),
  );
});
