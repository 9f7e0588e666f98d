import assert from "node:assert/strict";
import { parseOffers } from "../parsers/offers.ts";
import { fixture } from "./fixture.ts";

// Small offers pages shaped like the corpus's: AOD `#aod-offer` blocks in `#aod-offer-list`, and
// offer-listing `div.olpOffer` rows in `#olpOfferList`, each holding only the parts a case needs.

function aodPage(...offers: string[]): string {
  const blocks = offers.map((o) => `<div id="aod-offer" class="a-section">${o}</div>`).join("");
  return `<html><body><div id="aod-container"><div id="aod-offer-list">${blocks}</div></div>` +
    `</body></html>`;
}

function aodOffers(...offers: string[]) {
  return parseOffers(aodPage(...offers), { marketplace: "US" }).offers;
}

/** A price block as the 2025 fragments write it: the price to pay in `.a-offscreen`. */
function aodPrice(price: string): string {
  return `<div id="aod-price-1" class="a-section"><span class="a-price" data-a-size="l">` +
    `<span class="a-offscreen">${price}</span></span></div>`;
}

/** The "Sold by" row; `seller` is the right-hand cell's content. */
function aodSoldBy(seller: string): string {
  return `<div id="aod-offer-soldBy" class="a-section"><div class="a-fixed-left-grid">` +
    `<div class="a-fixed-left-grid-col a-col-left"><span class="a-size-small a-color-tertiary">` +
    `Sold by</span></div><div class="a-fixed-left-grid-col a-col-right">${seller}</div></div></div>`;
}

const SELLER_LINK = `<a class="a-size-small a-link-normal" ` +
  `href="/gp/aag/main?ie=UTF8&amp;seller=A1B2C3D4E5F6G7">Some Shop</a>`;

function olpOffers(sellerCell: string, extra = "", marketplace = "US") {
  const row = `<div class="a-row a-spacing-mini olpOffer" role="row">` +
    `<div class="a-column a-span2 olpPriceColumn"><span class="a-size-large a-color-price ` +
    `olpOfferPrice a-text-bold"> $14.97 </span></div>${extra}` +
    `<div class="a-column a-span2 olpSellerColumn"><h3 class="a-spacing-none olpSellerName">` +
    `${sellerCell}</h3></div></div>`;
  return parseOffers(
    `<html><body><div id="olpOfferList">${row}</div></body></html>`,
    { marketplace },
  ).offers;
}

Deno.test("an AOD offer naming its seller but no price and no seller id is kept", () => {
  // Sold by Amazon.com: a name without a seller link (2021 panel), here with no price shown.
  const offers = aodOffers(
    aodSoldBy(
      `<span aria-label="Amazon.com. Opens a new page" class="a-size-small a-color-base"> ` +
        `Amazon.com </span>`,
    ),
  );
  assert.equal(offers.length, 1);
  assert.equal(offers[0].price, null);
  assert.deepEqual(offers[0].seller, { id: null, name: "Amazon.com" });
});

Deno.test("an AOD offer's price is the price to pay, not the struck list price before it", () => {
  const block = `<div id="aod-price-1" class="a-section">` +
    `<span class="a-size-small a-color-secondary">List Price: <span class="a-price a-text-price" ` +
    `data-a-size="mini" data-a-strike="true"><span class="a-offscreen">$60.00</span></span></span>` +
    `<span class="a-price" data-a-size="medium_plus"><span class="a-offscreen">$54.00</span>` +
    `</span></div>`;
  const [offer] = aodOffers(block + aodSoldBy(SELLER_LINK));
  assert.deepEqual(offer.price, { amount: 54, display: "$54.00", currency: "USD" });
});

Deno.test("an AOD offer's secondary text without an amount is no shipping charge: the delivery promise is answered", () => {
  // span.a-color-secondary.a-size-base holds the 2021 panel's charge ("+ $14.38 shipping"), and
  // elsewhere labels ("AmazonGlobal Shipping" in the fee details); a label names no charge.
  const [offer] = aodOffers(
    aodPrice("$14.97") + aodSoldBy(SELLER_LINK) +
      `<span class="a-size-base a-color-secondary"> AmazonGlobal Shipping </span>` +
      `<div class="a-row aod-delivery-promise"><div id="delivery-message" class="a-section ` +
      `aod-delivery-promise-message"> Arrives: <b> March 3 - 9 </b> </div></div>`,
  );
  assert.equal(offer.shipping, "Arrives: March 3 - 9");
});

Deno.test("an AOD delivery promise loses the space the page leaves before its punctuation", () => {
  // The 2021 panel pads the bold dates with spaces (" Arrives: <b> March 3 - 9 </b>").
  const [offer] = aodOffers(
    aodPrice("$14.97") + aodSoldBy(SELLER_LINK) +
      `<div class="a-row aod-delivery-promise"><div id="delivery-message" class="a-section ` +
      `aod-delivery-promise-message"> FREE delivery <b> Tuesday </b>, <b> March 4 </b>. </div>` +
      `</div>`,
  );
  assert.equal(offer.shipping, "FREE delivery Tuesday, March 4.");
});

Deno.test("an AOD offer marked only by .aod-prime-badge is Prime", () => {
  const [plain, badged] = aodOffers(
    aodPrice("$14.97") + aodSoldBy(SELLER_LINK),
    aodPrice("$15.97") + `<span class="aod-prime-badge"></span>` + aodSoldBy(SELLER_LINK),
  );
  assert.equal(plain.is_prime, false);
  assert.equal(badged.is_prime, true);
});

Deno.test("an offer-listing row whose seller is shown only as a logo is named by the logo's alt text", () => {
  // An Amazon logo other than the site's own: the name is the logo's, not "Amazon.com".
  const [offer] = olpOffers(
    `<img alt="Amazon Warehouse" src="https://images-na.ssl-images-amazon.com/images/I/x.gif">`,
  );
  assert.deepEqual(offer.seller, { id: null, name: "Amazon Warehouse" });
  assert.equal(offer.is_fba, true);
});

Deno.test("an offer-listing row with Amazon's logo is Amazon's, fulfilled by Amazon, without its merchant id on the row", () => {
  // Amazon's merchant ids are listed for eight sites only; on amazon.com.au the logo's alt
  // ("Amazon.com.au") is what marks Amazon's own row.
  const [offer] = olpOffers(
    `<img alt="Amazon.com.au" src="https://images-na.ssl-images-amazon.com/images/I/x.gif">`,
    "",
    "AU",
  );
  assert.equal(offer.is_fba, true);
  assert.deepEqual(offer.seller, { id: null, name: "Amazon.com.au" });
});

Deno.test("an offer-listing row with a link in its .olpBadge is fulfilled by Amazon", () => {
  // The corpus's rows give that link the olpFbaPopoverTrigger class too; the badge alone says it.
  const badge = `<div class="a-column a-span3 olpDeliveryColumn"><div class="olpBadgeContainer">` +
    `<div class="olpBadge"><a href="javascript:void(0)" class="a-popover-trigger a-declarative">` +
    ` Fulfillment by Amazon </a></div></div></div>`;
  const seller = `<span class="a-size-medium a-text-bold"><a ` +
    `href="/gp/aag/main/ref=olp_merch_name_1?ie=UTF8&amp;seller=A1WNZAYT9WQDYM">Oasis1270</a>` +
    `</span>`;
  assert.equal(olpOffers(seller)[0].is_fba, false);
  assert.equal(olpOffers(seller, badge)[0].is_fba, true);
});

Deno.test("parseOffers() answers the ASIN the page names over the one in the address asked", async () => {
  // The 2021 offer-listing page names B004OA758C in its metric-asin input; an address naming
  // another ASIN (a redirect to this product) does not relabel the offers.
  const html = await fixture("offers/amazon.com__webapis-olp-B004OA758C.html");
  const url = "https://www.amazon.com/gp/offer-listing/B08V3MHKW2";
  assert.equal(parseOffers(html, { marketplace: "US", url }).asin, "B004OA758C");
  // An address is used only when the page names no ASIN.
  const bare = aodPage(aodPrice("$14.97") + aodSoldBy(SELLER_LINK));
  assert.equal(parseOffers(bare, { marketplace: "US", url }).asin, "B08V3MHKW2");
});
