/** The body both benchmark servers answer, so that only the gateway's work differs. */
export const BENCH_BODY = {
  url: "https://www.amazon.com/dp/B07H57DNVV",
  asin: "B07H57DNVV",
  count: 0,
  offers: [],
};
