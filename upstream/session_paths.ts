/**
 * The paths an operator's signed-in session (`UPSTREAM_COOKIES_<CODE>`) is sent to: the pages
 * Shelf reads, at the paths the marketplaces serve them. Every other path (`/v1/scrape` may name
 * any) is fetched without it, as a visitor who is not signed in: a client must not be able to make
 * the operator's account sign out, or open its orders or addresses, by naming
 * `/gp/flex/sign-out.html`, `/gp/css/order-history` or the address pop-over of the
 * delivery-location flow, which runs on postcode sessions only, never the operator's (probe DT:
 * `/portal-migration/hz/glow/` was still listed, for clients' scrapes alone).
 */

const PAGE_PATHS = [
  "/$", // the home page
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
