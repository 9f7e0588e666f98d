/** What the demo's archive holds, and so what its calls (printed, and the OpenAPI examples) ask for. */
export const DEMO = {
  asin: "B07H57DNVV",
  query: "portable charger",
  reviewsAsin: "B0BBPNPZTC",
  bestsellersCategory: "hi",
  offersAsin: "B0BN72FYFG",
  sellerId: "A2DP2EEPU3VU45",
};

interface Call {
  /** The endpoint's name in schemas/endpoints.ts. */
  endpoint: string;
  what: string;
  path: string;
  /** Printed by `deno task demo`; the rest only feed the OpenAPI examples. */
  printed: boolean;
}

/** Every call the archive answers with real data, as URLs under `origin`. */
export function demoCalls(origin: string): Call[] {
  const calls: Call[] = [
    {
      endpoint: "details",
      what: "product details",
      path: `/v1/products/details?asin=${DEMO.asin}&marketplace=US`,
      printed: true,
    },
    {
      endpoint: "search",
      what: "search",
      path: `/v1/products/search?query=${encodeURIComponent(DEMO.query)}&marketplace=US`,
      printed: true,
    },
    {
      endpoint: "reviews",
      what: "reviews",
      path: `/v1/products/reviews?asin=${DEMO.reviewsAsin}&marketplace=US`,
      printed: true,
    },
    {
      endpoint: "bestsellers",
      what: "best sellers",
      path: `/v1/bestsellers?category=${DEMO.bestsellersCategory}&marketplace=US`,
      printed: true,
    },
    {
      endpoint: "offers",
      what: "offers",
      path: `/v1/products/offers?asin=${DEMO.offersAsin}&marketplace=US`,
      printed: false,
    },
    {
      endpoint: "seller_products",
      what: "a seller's products",
      path: `/v1/sellers/products?seller_id=${DEMO.sellerId}&marketplace=US`,
      printed: false,
    },
  ];
  return calls.map((c) => ({ ...c, path: `${origin}${c.path}` }));
}
