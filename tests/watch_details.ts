/**
 * A real page's details answer at a price the test sets, for watch tests whose product source is
 * a stand-in: a refresh's answer is checked against the details schema, as a call's is.
 */
import { fixture } from "./fixture.ts";
import { parseProduct } from "../parsers/product.ts";

const { no_reviews_stated: _n, stock_unread: _s, ...PRODUCT } = parseProduct(
  await fixture("product/amazon.com__app-B07H57DNVV.html"),
  { marketplace: "US" },
);

export function detailsAt(asin: unknown, amount: number) {
  return {
    ...PRODUCT,
    missing: [],
    asin,
    price: { amount, display: `$${amount}.00`, currency: "USD", list_price: null },
    in_stock: true,
    bestsellers_rank: [],
  };
}
