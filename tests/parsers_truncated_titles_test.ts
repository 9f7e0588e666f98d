/**
 * Titles a tile shows cut short are made whole from the fuller copy the tile carries (issue
 * 16.1). The corpus has no tile whose shown title is cut while a fuller copy exists, so these are
 * real pages edited in one place each (text only): the shown title of one tile cut with "…",
 * the tile's own attributes left as saved. The one tile of the corpus that is cut with no fuller
 * copy (amazon.in's SOFTSPUN cloth, whose image alt is shorter still) keeps its shown title.
 */
import assert from "node:assert/strict";
import { parseBestsellers } from "../parsers/bestsellers.ts";
import { parseSearch } from "../parsers/search.ts";
import { untruncated } from "../parsers/page_text.ts";
import { fixture } from "./fixture.ts";

const RING =
  "Ring Video Doorbell - 1080p HD video, improved motion detection, easy installation – Satin Nickel";

Deno.test("best sellers: a tile's title cut with '…' is made whole from its image's alt text", async () => {
  const page = await fixture("bestsellers/amazon.com__parsy-zgbs-hi.html");
  const shown = `line-clamp-3_g3dy1">${RING}</div>`;
  assert.equal(page.split(shown).length, 2, "the tile's shown title occurs once");
  const edited = page.replace(
    shown,
    `line-clamp-3_g3dy1">Ring Video Doorbell - 1080p HD video, improved…</div>`,
  );
  const first = parseBestsellers(edited, { marketplace: "US" }).results[0];
  assert.equal(first.asin, "B08N5NQ869");
  assert.equal(first.title, RING);
});

Deno.test("search: a result's title cut with '...' is made whole from its heading's aria-label", async () => {
  const page = await fixture("search/amazon.com__pricechecker-portable-charger.html");
  const before = parseSearch(page, { marketplace: "US" }).results[0].title;
  assert.ok(before.length > 60, before);
  const cut = before.slice(0, 50) + "...";
  const shown = `<span>${before.replaceAll("&", "&amp;")}</span></h2>`;
  assert.ok(page.includes(shown), "the heading's shown title");
  const edited = page.replace(shown, `<span>${cut.replaceAll("&", "&amp;")}</span></h2>`);
  const first = parseSearch(edited, { marketplace: "US" }).results[0];
  // The aria-label is "Sponsored Ad - " + the title; the prefix is not part of the title.
  assert.equal(first.title, before);
});

Deno.test("a title cut with no fuller copy on the tile stays as the page shows it", async () => {
  const page = await fixture("bestsellers/amazon.in__santapan-gp-bestsellers.html");
  const tile = parseBestsellers(page, { marketplace: "IN" }).results.find((r) =>
    r.title.startsWith("SOFTSPUN Microfiber Cloth")
  );
  assert.ok(tile);
  assert.match(tile.title, /Washing & Detailing\.…$/);
});

Deno.test("untruncated() takes only a copy that holds the shown text and is not cut itself", () => {
  assert.equal(
    untruncated("Acme Widget Pro…", ["Acme Widget Pro Max 2000"]),
    "Acme Widget Pro Max 2000",
  );
  assert.equal(untruncated("Acme Widget Pro…", ["Other Widget Pro Max"]), "Acme Widget Pro…");
  assert.equal(untruncated("Acme Widget Pro…", ["Acme Widget Pro Max…"]), "Acme Widget Pro…");
  assert.equal(untruncated("Acme Widget Pro", ["Acme Widget Pro Max"]), "Acme Widget Pro");
});
