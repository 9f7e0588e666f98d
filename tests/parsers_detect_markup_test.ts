/**
 * detectPage() on corpus pages that lack the detail it usually names them by (their page-type
 * token, a form's name): the name decides which parser reads the page and what it is charged as,
 * or whether it is a block that pauses the marketplace.
 */
import assert from "node:assert/strict";
import { detectPage } from "../parsers/detect.ts";
import { fixture, fixtureNames } from "./fixture.ts";

const STOREFRONT = "seller_products/amazon.com__app-storefront-A2DP2EEPU3VU45.html";
const PRODUCT = "product/amazon.de__epic-B0BG6843GX.html";
const SIGNIN_WALL = "blocked/amazon.de__epic-reviews-signin-wall.html";
const HOME = "categories/amazon.ca__amzorders-homepage-searchdropdown.html";

/** `page` with its page-type tokens renamed, as in a fragment that carries none. */
function withoutToken(page: string): string {
  return page.replace(/\bue_pty\b/g, "ue_ptx").replace(/\bpageType\b/g, "pageKind");
}

/** `page` with `text` inserted just before `</head>`. */
function inHead(page: string, text: string): string {
  const at = page.indexOf("</head>");
  assert.ok(at > 0);
  return page.slice(0, at) + text + page.slice(at);
}

Deno.test("detectPage() names a storefront without its page-type token seller_products, not search", async () => {
  // Named search, a storefront would be parsed and charged as a search.
  const page = await fixture(STOREFRONT);
  const bare = withoutToken(page);
  assert.ok(!/\bue_pty\b|\bpageType\b/.test(bare));
  assert.ok(bare.includes('<input type="hidden" name="me" value="A2DP2EEPU3VU45"/>'));
  assert.deepEqual(detectPage(bare), { kind: "page", type: "seller_products" });
  // Its result cards alone name a search: the merchant's `me` input and the location modal's
  // storeContext=merchant-items are what make it a store.
  const noMerchant = bare.replace('name="me" value="A2DP2EEPU3VU45"', 'name="k" value=""')
    .replaceAll("storeContext&#x3D;merchant-items", "storeContext&#x3D;");
  assert.deepEqual(detectPage(noMerchant), { kind: "page", type: "search" });
});

Deno.test("detectPage() names a sign-in wall by its form's /ap/signin action when the form has no name", async () => {
  // The corpus's walls all name their form signIn (or id ap_login_form); the action posting to
  // /ap/signin is the third sign, read in the form tag only.
  const page = await fixture(SIGNIN_WALL);
  const form =
    '<form name="signIn" method="post" novalidate action="https://www.amazon.de/ap/signin"';
  assert.ok(page.includes(form));
  const unnamed = page.replace('<form name="signIn" method="post"', '<form method="post"');
  // The page's script still says form[name="signIn"]: only the form's own tag counts.
  assert.ok(unnamed.includes('form[name="signIn"]'));
  assert.deepEqual(detectPage(unnamed), { kind: "blocked", reason: "signin_wall" });
  const elsewhere = unnamed.replace(
    'action="https://www.amazon.de/ap/signin"',
    'action="/ax/claim"',
  );
  assert.deepEqual(detectPage(elsewhere), { kind: "unknown" });
});

Deno.test("detectPage() reads a promotion's canonical link whatever the case of its rel", async () => {
  // rel values are case-insensitive in HTML: rel="Canonical" is the same link.
  const page = await fixture(HOME);
  assert.deepEqual(detectPage(page), { kind: "unknown" });
  for (const rel of ["canonical", "Canonical", "CANONICAL"]) {
    const promotion = inHead(
      page,
      `<link rel="${rel}" href="https://www.amazon.ca/promotion/psp/A2U0CQXJULUZFI">`,
    );
    assert.deepEqual(detectPage(promotion), { kind: "page", type: "promotion" }, rel);
  }
});

Deno.test("detectPage() reads the location modal's pageType&#61;Detail, the decimal spelling of &#x3D;", async () => {
  // A product page whose only token is the one in its location modal's data-a-modal link, which
  // the corpus spells `&#x3D;` and PAGE_TOKEN also reads as `&#61;`. Its title's ids are renamed
  // too, so that the markup rules (which name a product page by them) cannot stand in for it.
  const page = (await fixture(PRODUCT)).replace(
    /id=(["'])(productTitle|dp-container)\1/g,
    "id=$1x-$2$1",
  );
  const modalOnly = page.replace(/\bue_pty\b/g, "ue_ptx").replace(
    /\bpageType(?=\s*:|=)/g,
    "pageKind",
  );
  assert.ok(modalOnly.includes("pageType&#x3D;Detail"));
  assert.deepEqual(detectPage(modalOnly), { kind: "page", type: "product" });
  const decimal = modalOnly.replaceAll("pageType&#x3D;", "pageType&#61;");
  assert.notEqual(decimal, modalOnly);
  assert.deepEqual(detectPage(decimal), { kind: "page", type: "product" });
  // The token is what names it: the page's markup alone does not say product.
  assert.notDeepEqual(detectPage(withoutToken(decimal)), { kind: "page", type: "product" });
});

Deno.test("detectPage() names a product page without its page-type token a product, not the offers or reviews it embeds", async () => {
  // Product pages carry the offers popover's container and their top reviews; only they carry the
  // title's id. Before the product rule led the markup rules, 31 of 35 were named offers or reviews.
  let pages = 0;
  for (const name of await fixtureNames("product")) {
    const page = await fixture(name);
    if (!/id=["'](?:productTitle|dp-container)["']/.test(page)) continue;
    pages++;
    assert.deepEqual(detectPage(page), { kind: "page", type: "product" }, name);
    assert.deepEqual(detectPage(withoutToken(page)), { kind: "page", type: "product" }, name);
  }
  assert.equal(pages, 35);
});

Deno.test("detectPage() names a search, category or storefront page without its page-type token by its result cards, not the offers shell it embeds", async () => {
  // Listing pages carry the offers popover's empty container (all-offers-display); before the
  // search rule came ahead of the offers rule, 13 of 20 search pages and the category page were
  // named offers. A storefront stays seller_products and a category page is read as a search.
  const expected: Record<string, string> = {
    search: "search",
    category: "search",
    seller_products: "seller_products",
  };
  let pages = 0;
  let withShell = 0;
  for (const folder of Object.keys(expected)) {
    for (const name of await fixtureNames(folder)) {
      const bare = withoutToken(await fixture(name));
      assert.ok(!/\bue_pty\b|\bpageType\b/.test(bare), name);
      // An empty results shell (amazon.in) shows no card to name it by.
      if (!/data-component-type=["']s-search-result["']|id=["']s-results-list-atf["']/.test(bare)) {
        continue;
      }
      pages++;
      if (/id=["']all-offers-display["']/.test(bare)) withShell++;
      assert.deepEqual(detectPage(bare), { kind: "page", type: expected[folder] }, name);
    }
  }
  assert.equal(pages, 21);
  assert.ok(withShell >= 14, `${withShell} pages with the offers shell`);
});
