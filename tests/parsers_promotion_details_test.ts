// Finer readings of a promotion page (probe IC): which title, dates, discount, id and items the
// parser keeps when the page offers a second candidate. A real amazon.com.br page where it shows
// the case (tests/fixtures/promotion), else the hand-built PROMOTION_PAGE with one change, named.
import assert from "node:assert/strict";
import { parsePromotion } from "../parsers/promotion.ts";
import { PromotionPage } from "../schemas/pages.ts";
import { fixture } from "./fixture.ts";
import { PROMOTION_PAGE } from "./handbuilt_pages.ts";
import { changedPage } from "./page_edit.ts";

const US = { marketplace: "US" };

const changed = (from: string | RegExp, to: string, page = PROMOTION_PAGE) =>
  changedPage(page, from, to);

Deno.test("parsePromotion() takes the title from the title box's heading, not from the rest of the box", () => {
  // Change: a line after the heading inside #promotionTitle.
  const page = changed("</span></h1></div>", "</span></h1><span>Sold by ACME</span></div>");
  assert.equal(parsePromotion(page, US).title, "Save 20% on select kitchen items");
});

Deno.test("parsePromotion() answers a promotion that shows only its terms", () => {
  // Change: no title heading and no product list; the terms stay.
  const page = changed("<h1><span>Save 20% on select kitchen items</span></h1>", "")
    .replace(/<ul id="productInfoList"[\s\S]*<\/ul>/, "");
  assert.ok(!page.includes("productGrid"));
  const promo = PromotionPage.parse(parsePromotion(page, US));
  assert.equal(promo.terms, "Discount applies at checkout. Offer valid while supplies last.");
  assert.equal(promo.title, "");
  assert.deepEqual(promo.eligible_items, []);
});

Deno.test("parsePromotion() reads dates without the schedule's closing full stop", () => {
  const range = changed("to Friday October 31, 2025", "to Friday October 31, 2025.");
  assert.equal(parsePromotion(range, US).ends_at, "Friday October 31, 2025");
  const ends = changed(/From Friday[^<]*/, "Ends on: Friday October 31, 2025.");
  assert.equal(parsePromotion(ends, US).ends_at, "Friday October 31, 2025");
});

Deno.test("parsePromotion() reads an end date stated as 'Expires on'", () => {
  // The existing test covers the Portuguese "Expira em" only.
  for (const schedule of ["Expires on: October 31, 2025", "Expires October 31, 2025"]) {
    const promo = parsePromotion(changed(/From Friday[^<]*/, schedule), US);
    assert.equal(promo.starts_at, null, schedule);
    assert.equal(promo.ends_at, "October 31, 2025", schedule);
  }
});

Deno.test("parsePromotion() lists another layout's product tiles without the shopper's cart rows", () => {
  // Change: no productGrid tiles, so every [data-asin] is read; the cart rows carry the classes
  // of the real page A2U0CQXJULUZFI's "everywhere cart" flyout and cart preview.
  const page = changed(
    /<ul id="productInfoList"[\s\S]*<\/ul>/,
    '<div data-asin="B003PAOAWG" class="a-row ewc-item"></div>' +
      '<ul><li name="carItemGrid" class="textAlignCenter paddingTop8 paddingBottom8 cartItemGrid"' +
      ' data-asin="B0BFYX32MW"></li></ul>' +
      '<div class="a-section"><div data-asin="B07QXV6N1B"><a href="/dp/B07QXV6N1B">Rubbermaid</a>' +
      '</div><div data-asin="B08KH5CQ1P"><a href="/dp/B08KH5CQ1P">OXO</a></div></div>',
  );
  assert.ok(!page.includes("productGrid"));
  assert.deepEqual(parsePromotion(page, US).eligible_items, ["B07QXV6N1B", "B08KH5CQ1P"]);
});

Deno.test("parsePromotion() takes no id from a form field whose value runs on past an id's characters", () => {
  // Change: the canonical link replaced by the form field a browser-saved page carries, its value
  // not an id; the id asked for stands, not the value's first part.
  const page = changed(
    /<link rel="canonical"[^>]*>/,
    '<input type="hidden" id="queryModel_promotionId" value="A3TBV928F3J7NX-old">',
  );
  const url = "https://www.amazon.com/promotion/psp/A2P3X1AN29HWHX";
  const promo = parsePromotion(page, { ...US, url });
  assert.equal(promo.promo_id, "A2P3X1AN29HWHX");
  assert.equal(promo.url, url);
});

Deno.test("parsePromotion() answers an id from the canonical link that /v1/promotions takes back, never one with _ or -", () => {
  // The promo_id parameter takes /^[A-Z0-9]{6,24}$/ (schemas/endpoints.ts); the real pages append
  // "_<suffix>" to the id in element ids (promo_tnc_content_A3TBV928F3J7NX_6E).
  const page = changed(
    "/promotion/psp/A2P3X1AN29HWHX",
    "/promotion/psp/A2P3X1AN29HWHX_2",
  );
  const promo = parsePromotion(page, US);
  assert.match(promo.promo_id, /^[A-Z0-9]{6,24}$/);
  assert.equal(promo.url, `https://www.amazon.com/promotion/psp/${promo.promo_id}`);
});

Deno.test("parsePromotion() reads the discount from the title only, not an amount in the terms", async () => {
  // The real page A3TBV928F3J7NX with its title's "R$ 15" removed: its terms' "compra mínima de
  // $2 produtos" is a minimum purchase, not the promotion's discount.
  const real = await fixture("promotion/amazon.com.br__amazingscraper-A3TBV928F3J7NX.html");
  const page = changed(
    'bold">Economize R$&nbsp;15 em 2 itens</span></h1>',
    'bold">Economize em 2 itens</span></h1>',
    real,
  );
  const promo = parsePromotion(page, { marketplace: "BR" });
  assert.equal(promo.title, "Economize em 2 itens");
  assert.match(promo.terms, /compra mínima de \$2 produtos/);
  assert.equal(promo.discount, "");
});
