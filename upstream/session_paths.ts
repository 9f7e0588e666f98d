/**
 * The paths an operator's signed-in session (`UPSTREAM_COOKIES_<CODE>`) is sent to: the pages
 * Shelf reads, at the paths the marketplaces serve them, and the delivery-location flow. Every
 * other path (`/v1/scrape` may name any) is fetched without it, as a visitor who is not signed in:
 * a client must not be able to make the operator's account sign out, or open its orders or
 * addresses, by naming `/gp/flex/sign-out.html` or `/gp/css/order-history`.
 */

const PAGE_PATHS = [
  "/$", // the home page, where the delivery-location flow starts
  "/s(?:/|$)", // search, category grids and seller storefronts
  "/(?:[^/]+/)?dp/",
  "/gp/product/", // product pages, and the offers of /gp/product/ajax/
  "/gp/aw/d/",
  "/gp/offer-listing/",
  "/gp/aod/",
  "/(?:[^/]+/)?product-reviews/",
  "/gp/customer-reviews/",
  "/gp/bestsellers(?:/|$)",
  "/gp/new-releases(?:/|$)",
  "/(?:[^/]+/)?zgbs(?:/|$)",
  "/deals(?:/|$)",
  "/deal/",
  "/gp/goldbox(?:/|$)",
  "/sp(?:/|$)",
  "/promotion/psp/",
  "/portal-migration/hz/glow/", // the delivery-location flow
];

// A marketplace may put the page's language first (`/-/en/dp/…`).
const SESSION_PATH = new RegExp(
  `^(?:/-/[a-z]{2}(?:[_-][a-z]{2})?)?(?:${PAGE_PATHS.join("|")})`,
  "i",
);

/** Whether a request to `pathname` may carry the operator's session. */
export function sessionPath(pathname: string): boolean {
  return SESSION_PATH.test(pathname);
}
