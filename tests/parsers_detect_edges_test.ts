/**
 * detectPage() on corpus pages altered by one detail (probe HO's D-mutants): each alteration is
 * one a real upstream body may carry, and the name it gets decides the answer, its charge, and
 * whether the marketplace is counted towards a pause.
 */
import assert from "node:assert/strict";
import { detectPage } from "../parsers/detect.ts";
import { fixture } from "./fixture.ts";

const SEARCH = "search/amazon.com__alaa-laptop.html";
const HOME = "categories/amazon.ca__amzorders-homepage-searchdropdown.html";
const DOGS_503 = "blocked/amazon.com__cagan-dogs-of-amazon-503.html";

/** `page` with `text` inserted just after its `<body` start tag. */
function inBody(page: string, text: string): string {
  const at = page.indexOf(">", page.search(/<body[\s>]/)) + 1;
  assert.ok(at > 0);
  return page.slice(0, at) + text + page.slice(at);
}

/** `page` with `text` inserted just before `</head>`. */
function inHead(page: string, text: string): string {
  const at = page.indexOf("</head>");
  assert.ok(at > 0);
  return page.slice(0, at) + text + page.slice(at);
}

/** `page` with its page-type tokens renamed, as in a fragment that carries none. */
function withoutToken(page: string): string {
  return page.replace(/\bue_pty\b/g, "ue_ptx").replace(/\bpageType\b/g, "pageKind");
}

Deno.test("detectPage() names a body without markup unknown, whatever its text says", async () => {
  // A proxy's plain-text rendering of a block page: no "<", so no page to name, not a 404 nor a
  // captcha (those are retried or charged on their markup).
  for (const name of [DOGS_503, "blocked/amazon.de__epic-captcha.html"]) {
    const text = (await fixture(name)).replace(/<[^>]*>/g, " ").replaceAll("<", " ");
    assert.ok(!text.includes("<"));
    assert.deepEqual(detectPage(text), { kind: "unknown" }, name);
  }
  for (
    const text of [
      "Looking for something? We're sorry. The Web address you entered is not a functioning page",
      "Type the characters you see in this image",
      "Sorry! Something went wrong!",
    ]
  ) assert.deepEqual(detectPage(text), { kind: "unknown" }, text);
});

Deno.test("detectPage() keeps a search page a search when its hidden `me` input holds no merchant id", async () => {
  const page = await fixture(SEARCH);
  assert.deepEqual(detectPage(page), { kind: "page", type: "search" });
  // A merchant id is at least six capitals and digits: "A1" is some other value.
  const short = inBody(page, '<input type="hidden" name="me" value="A1">');
  assert.deepEqual(detectPage(short), { kind: "page", type: "search" });
  // A value written before the name is not read as the name's value.
  const valueFirst = inBody(page, '<input type="hidden" value="A1B2C3D4E5" name="me">');
  assert.deepEqual(detectPage(valueFirst), { kind: "page", type: "search" });
  // The storefront's own input, name then merchant id, makes it one.
  const store = inBody(page, '<input type="hidden" name="me" value="A1B2C3D4E5">');
  assert.deepEqual(detectPage(store), { kind: "page", type: "seller_products" });
});

Deno.test("detectPage() names a page a promotion only from a canonical link to a promotion id", async () => {
  const page = await fixture(HOME);
  assert.deepEqual(detectPage(page), { kind: "unknown" });
  const alternate = inHead(
    page,
    '<link rel="alternate" href="https://www.amazon.ca/promotion/psp/A1B2C3D4E5">',
  );
  assert.deepEqual(detectPage(alternate), { kind: "unknown" });
  const noId = inHead(
    page,
    '<link rel="canonical" href="https://www.amazon.ca/promotion/psp/?x=1">',
  );
  assert.deepEqual(detectPage(noId), { kind: "unknown" });
  const canonical = inHead(
    page,
    '<link rel="canonical" href="https://www.amazon.ca/promotion/psp/A1B2C3D4E5">',
  );
  assert.deepEqual(detectPage(canonical), { kind: "page", type: "promotion" });
});

Deno.test("detectPage() names the dogs page a 404 when it links cs_404, though its title says something went wrong", async () => {
  const page = await fixture(DOGS_503);
  assert.ok(page.includes("cs_503"));
  const notFound = page.replaceAll("cs_503", "cs_404");
  assert.deepEqual(detectPage(notFound), { kind: "not_found" });
});

Deno.test("detectPage() reads 'Something went wrong' anywhere in a long title", async () => {
  const page = await fixture(DOGS_503);
  const long = page.replace(
    "<title>Sorry! Something went wrong!</title>",
    "<title>Amazon.com Online Shopping for Electronics and more: Something went wrong</title>",
  );
  assert.notEqual(long, page);
  assert.deepEqual(detectPage(long), { kind: "blocked", reason: "service_unavailable" });
});

Deno.test("detectPage() names only a search a storefront: a reviews or product page with a merchant link stays itself", async () => {
  // Read from markup (a fragment without the page-type token), as the AJAX reviews pages are.
  const reviews = withoutToken(await fixture("reviews/amazon.com__jachet-B01IPHVFUI.html"));
  assert.deepEqual(detectPage(reviews), { kind: "page", type: "reviews" });
  const sellerLink = '<a href="/s?me=A1B2C3D4E5&amp;storeContext=merchant-items">Store</a>';
  assert.deepEqual(detectPage(inBody(reviews, sellerLink)), { kind: "page", type: "reviews" });
  const product = withoutToken(await fixture("product/amazon.ca__app-B01GAWQSFW.html"));
  assert.deepEqual(detectPage(product), { kind: "page", type: "product" });
  const meInput = '<input type="hidden" name="me" value="A1B2C3D4E5">';
  assert.deepEqual(detectPage(inBody(product, meInput)), { kind: "page", type: "product" });
  assert.deepEqual(detectPage(inBody(product, sellerLink)), { kind: "page", type: "product" });
});
