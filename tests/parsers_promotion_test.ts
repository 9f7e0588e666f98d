// Two real amazon.com.br promotion pages (tests/fixtures/promotion, not in ../shared/corpus: see
// tests/fixtures/MANIFEST.tsv), and a hand-built page in the markup public scrapers document.
import assert from "node:assert/strict";
import { parsePromotion } from "../parsers/promotion.ts";
import { ParseError } from "../parsers/parse_error.ts";
import { PromotionPage } from "../schemas/pages.ts";
import { fixture, fixtureNames } from "./fixture.ts";
import { PROMOTION_PAGE } from "./handbuilt_pages.ts";
import { assertRobust } from "./robustness.ts";
import { startRig } from "./upstream_harness.ts";

Deno.test("parsePromotion() reads title, schedule, terms, discount and eligible ASINs", () => {
  const promo = PromotionPage.parse(parsePromotion(PROMOTION_PAGE, { marketplace: "us" }));
  assert.deepEqual(promo, {
    url: "https://www.amazon.com/promotion/psp/A2P3X1AN29HWHX",
    terms: "Discount applies at checkout. Offer valid while supplies last.",
    title: "Save 20% on select kitchen items",
    ends_at: "Friday October 31, 2025",
    discount: "20%",
    promo_id: "A2P3X1AN29HWHX",
    starts_at: "Friday October 24, 2025 12:00 AM PDT",
    marketplace: "US",
    // Tiles repeat an ASIN and one has none: each ASIN once, in page order.
    eligible_items: ["B07QXV6N1B", "B08KH5CQ1P"],
  });
});

// Read off the page: #promotionTitle h1 "Economize R$&nbsp;15 em 2 itens"; #promotionSchedule "De
// sábado 14 de fevereiro de 2026 até quinta-feira 30 de abril de 2026 às 00:00 BRT"; 55
// li[name=productGrid] tiles, one an empty template, the first B076JPBFVN and the last
// B09VVB884J; #queryModel_promotionId A3TBV928F3J7NX; #promo_tnc_content_A3TBV928F3J7NX_6E's
// first item "Se algum dos produtos relacionados à promoção for devolvido, …".
Deno.test("parsePromotion() reads a real amazon.com.br promotion page", async () => {
  const html = await fixture("promotion/amazon.com.br__amazingscraper-A3TBV928F3J7NX.html");
  const promo = PromotionPage.parse(parsePromotion(html, { marketplace: "BR" }));
  assert.equal(promo.title, "Economize R$ 15 em 2 itens");
  assert.equal(promo.starts_at, "sábado 14 de fevereiro de 2026");
  assert.equal(promo.ends_at, "quinta-feira 30 de abril de 2026 às 00:00 BRT");
  assert.equal(promo.discount, "R$ 15");
  // No canonical link on the saved page: the id from its own form field.
  assert.equal(promo.promo_id, "A3TBV928F3J7NX");
  assert.equal(promo.url, "https://www.amazon.com.br/promotion/psp/A3TBV928F3J7NX");
  assert.equal(promo.eligible_items.length, 54);
  assert.equal(promo.eligible_items[0], "B076JPBFVN");
  assert.equal(promo.eligible_items.at(-1), "B09VVB884J");
  assert.match(promo.terms, /^Se algum dos produtos relacionados à promoção for devolvido, /);
  // The terms are list items: '…<a><span>Amazon.com.br</span></a>.</li><li>Itens colocados…' and
  // '…término da promoção</li><li>Para usufruir…' read apart, not joined (probe GG).
  assert.match(promo.terms, /no Amazon\.com\.br\. Itens colocados no Carrinho/);
  assert.match(promo.terms, /após o término da promoção Para usufruir desta/);
});

Deno.test("parsePromotion() names the promotion its page shows in its URL too, whatever id reached it (probe EC)", async () => {
  const html = await fixture("promotion/amazon.com.br__amazingscraper-A3TBV928F3J7NX.html");
  const url = "https://www.amazon.com.br/promotion/psp/AOTHERPROMO1";
  const promo = parsePromotion(html, { marketplace: "BR", url });
  assert.equal(promo.promo_id, "A3TBV928F3J7NX");
  assert.equal(promo.url, "https://www.amazon.com.br/promotion/psp/A3TBV928F3J7NX");
  const own = "https://www.amazon.com.br/promotion/psp/A3TBV928F3J7NX?ref=x";
  assert.equal(parsePromotion(html, { marketplace: "BR", url: own }).url, own);
});

// Read off the page: 18 li[name=productGrid] tiles (one empty), the first B0DTMQBLSY and the last
// B0BN8BN8RT; before them, the signed-in shopper's cart: 34 div.ewc-item rows of the "everywhere
// cart" flyout (B003PAOAWG first, not a tile) and one li.cartItemGrid (B0BFYX32MW, which a tile
// names too, further down).
Deno.test("parsePromotion() lists the promotion's tiles, not the shopper's cart on the same page", async () => {
  const html = await fixture("promotion/amazon.com.br__amazingscraper-A2U0CQXJULUZFI.html");
  const promo = parsePromotion(html, { marketplace: "BR" });
  assert.equal(promo.title, "Só no app - R$ 50 off em Jogos Galapagos");
  assert.equal(promo.discount, "R$ 50");
  assert.equal(promo.promo_id, "A2U0CQXJULUZFI");
  assert.equal(promo.eligible_items.length, 17);
  assert.equal(promo.eligible_items[0], "B0DTMQBLSY");
  assert.equal(promo.eligible_items.at(-1), "B0BN8BN8RT");
  assert.ok(!promo.eligible_items.includes("B003PAOAWG"));
  assert.ok(promo.eligible_items.indexOf("B0BFYX32MW") > 0, "in the tiles' order");
  assert.match(
    promo.terms,
    /^Esta promoção somente poderá ser utilizado para compra de produtos físicos\./,
  );
});

Deno.test("parsePromotion() keeps only an end date and nulls an unreadable schedule", () => {
  const ends = PROMOTION_PAGE.replace(/From Friday[^<]*/, "Expira em: domingo 15 de março de 2026");
  const a = parsePromotion(ends, { marketplace: "BR" });
  assert.equal(a.starts_at, null);
  assert.equal(a.ends_at, "domingo 15 de março de 2026");
  const odd = PROMOTION_PAGE.replace(/From Friday[^<]*/, "While supplies last");
  const b = parsePromotion(odd, { marketplace: "US" });
  assert.equal(b.starts_at, null);
  assert.equal(b.ends_at, null);
});

Deno.test("parsePromotion() refuses a page that is not a promotion", async () => {
  const search = await fixture("search/amazon.com__pavel-ipad-pro.html");
  assert.throws(() => parsePromotion(search, { marketplace: "US" }), ParseError);
});

Deno.test("parsePromotion() gives a valid page or ParseError on truncated and junk input", async () => {
  assertRobust(parsePromotion, PromotionPage, PROMOTION_PAGE, "US");
  for (const name of fixtureNames("promotion")) {
    assertRobust(parsePromotion, PromotionPage, await fixture(name), "BR");
  }
});

Deno.test("a promotion page that shows no promotion is an uncharged 404 through the API, not an empty answer", async () => {
  await using rig = await startRig();
  rig.fake.page("https://www.amazon.com/promotion/psp/AENDEDPROMO1", {
    html: "<html><head><title>Amazon.com</title></head><body>" +
      "<p>This promotion is no longer available.</p></body></html>",
  });
  rig.fake.page("https://www.amazon.com/promotion/psp/A2P3X1AN29HWHX", { html: PROMOTION_PAGE });
  const ended = await rig.call("/v1/promotions?promo_id=AENDEDPROMO1");
  assert.equal(ended.status, 404, JSON.stringify(ended.body));
  assert.equal(ended.headers.get("x-credits-cost"), "0");
  const live = await rig.call("/v1/promotions?promo_id=A2P3X1AN29HWHX");
  assert.equal(live.status, 200, JSON.stringify(live.body).slice(0, 200));
  assert.equal(live.body.title, "Save 20% on select kitchen items");
});

Deno.test("a promotion page that lists eligible items but shows no title or terms is answered, not refused", async () => {
  const bare = PROMOTION_PAGE
    .replace("<h1><span>Save 20% on select kitchen items</span></h1>", "")
    .replace(/<div id="promotionTerms"[^]*?<\/div>/, "");
  assert.ok(bare.includes('id="promotionTitle"') && !bare.includes("promotionTerms"));
  const promo = PromotionPage.parse(parsePromotion(bare, { marketplace: "US" }));
  assert.ok(!promo.title, JSON.stringify(promo.title));
  assert.deepEqual(promo.eligible_items, ["B07QXV6N1B", "B08KH5CQ1P"]);
  await using rig = await startRig();
  rig.fake.page("https://www.amazon.com/promotion/psp/A2P3X1AN29HWHX", { html: bare });
  const got = await rig.call("/v1/promotions?promo_id=A2P3X1AN29HWHX");
  assert.equal(got.status, 200, JSON.stringify(got.body).slice(0, 300));
  assert.deepEqual(got.body.eligible_items, ["B07QXV6N1B", "B08KH5CQ1P"]);
});
