/**
 * A catalog for tests that spend an allowance to its end: the built-in plans and `bulk`, with
 * every endpoint group and a rate no test reaches, so that only the credits decide. Usage-alert
 * tests mail through tests/smtp_sink.ts with the delivery loop's timings shortened.
 */
import { BUILTIN_PLANS, Plans } from "../metering/plans.ts";

/** A metered call of one credit that the tests' data source answers at once. */
export const OFFERS = "/v1/products/offers?asin=B07H57DNVV";

export const bulk = (credits: number): Plans =>
  new Plans([...BUILTIN_PLANS, {
    id: "bulk",
    credits,
    rate_limit_per_sec: 1000,
    max_keys: 5,
    groups: ["products", "reviews", "sellers", "merchandising", "utility", "scrape"],
  }]);

/** The alert delivery loop's poll and retry times in tests. */
export const FAST_ALERTS = { pollMs: 50, retryMs: 50, maxDelayMs: 400 };
export const ALERTS_FROM = "Shelf alerts <alerts@shelf.test>";
