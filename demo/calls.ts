/** What the demo's archive holds, and so what its printed calls ask for. */
export const DEMO = {
  asin: "B07H57DNVV",
  query: "portable charger",
  reviewsAsin: "B0BBPNPZTC",
  bestsellersCategory: "hi",
};

/** The calls the demo prints: each answers from the archive with real data. */
export function demoCalls(origin: string): { what: string; path: string }[] {
  return [
    {
      what: "product details",
      path: `/v1/products/details?asin=${DEMO.asin}&marketplace=US`,
    },
    {
      what: "search",
      path: `/v1/products/search?query=${encodeURIComponent(DEMO.query)}&marketplace=US`,
    },
    {
      what: "reviews",
      path: `/v1/products/reviews?asin=${DEMO.reviewsAsin}&marketplace=US`,
    },
    {
      what: "best sellers",
      path: `/v1/bestsellers?category=${DEMO.bestsellersCategory}&marketplace=US`,
    },
  ].map((c) => ({ ...c, path: `${origin}${c.path}` }));
}
