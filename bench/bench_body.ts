import type { Snapshot } from "../metering/meter.ts";

/** The body both benchmark servers answer, so that only the gateway's work differs. */
export const BENCH_BODY = {
  url: "https://www.amazon.com/dp/B07H57DNVV",
  asin: "B07H57DNVV",
  count: 0,
  offers: [],
};

/** What the reference servers put in their six metering headers, as a meter's snapshot would. */
export function referenceSnapshot(): Snapshot {
  return {
    at: Date.now(),
    remaining: 1_000_000_000,
    periodStart: Date.now(),
    periodEnd: Date.now() + 30 * 24 * 3600 * 1000,
    rateLimit: 1_000_000,
    windowRemaining: 1_000_000,
  };
}
