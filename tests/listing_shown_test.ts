/**
 * listingShown() on its own: the search words it echoes are one plain line with single spaces,
 * whatever the page it is given holds. The search parser already collapses the spaces of the
 * links' words and page reading drops control characters, so no page over HTTP shows these cases;
 * listingShown makes its own promise all the same, as its answer is charged and echoed as given.
 */
import assert from "node:assert/strict";
import { listingShown } from "../upstream/listing_shown.ts";
import { parseSearch } from "../parsers/search.ts";
import { fixture } from "./fixture.ts";

const SEARCH = "search/amazon.com__alaa-laptop.html"; // links_query "laptop"
const OLD_SEARCH = "search/amazon.de__amznscrp-plastikfrei-flasche.html"; // rh=i:aps,k:…

Deno.test("listingShown echoes the search words of an older page's rh with their spacing collapsed", async () => {
  const page = parseSearch(await fixture(OLD_SEARCH), { marketplace: "DE" });
  assert.equal(page.links_node, "i:aps,k:plastikfrei flasche", "the page as parsed");
  const spaced = { ...page, links_node: "i:aps,k: plastikfrei \t  flasche " };
  assert.deepEqual(listingShown("search", { query: "flaschen" }, spaced), {
    query: "plastikfrei flasche",
  });
  // The same words spaced otherwise are the words asked for: nothing to echo.
  assert.deepEqual(listingShown("search", { query: "Plastikfrei  Flasche" }, spaced), {});
});

Deno.test("listingShown never echoes search words holding a control character", async () => {
  const page = parseSearch(await fixture(SEARCH), { marketplace: "US" });
  assert.equal(page.links_query, "laptop", "the page as parsed");
  assert.deepEqual(listingShown("search", { query: "notebook" }, page), { query: "laptop" });
  // A line break or a control in an echoed label breaks the client's display or its log.
  for (const words of ["lap\u0001top", "lap\ntop", "laptop\u007f"]) {
    assert.deepEqual(
      listingShown("search", { query: "notebook" }, { ...page, links_query: words }),
      {},
      JSON.stringify(words),
    );
  }
});
