/**
 * Watches (INTERFACE.md "Beyond the spec"): the body of `POST /v1/watches`, the views of a watch
 * the API answers with, and the webhook event. The OpenAPI document is generated from these.
 */
import { z } from "zod";
import { BestsellersRank } from "./pages.ts";
import { Price } from "./resources.ts";
import { MARKETPLACE_CODES } from "./marketplaces.ts";
import { ZIP } from "./params.ts";

export const WATCH_FIELDS = ["price", "in_stock", "rank"] as const;
export type WatchField = (typeof WATCH_FIELDS)[number];

/** The watch routes, for the OpenAPI document and the endpoint index (both list them). */
export const WATCH_ROUTES = {
  create: {
    path: "/v1/watches",
    method: "POST",
    summary: "Watch a product and get a signed webhook when its price, stock or rank changes",
  },
  list: {
    path: "/v1/watches",
    method: "GET",
    summary: "The watches of this key's account (without their secrets)",
  },
  remove: { path: "/v1/watches/{id}", method: "DELETE", summary: "Stop and delete a watch" },
} as const;

/** Longest refresh interval a watch may ask for: 30 days. */
export const MAX_EVERY_SECONDS = 30 * 86_400;
/** Watches one account may hold. */
export const MAX_WATCHES_PER_ACCOUNT = 100;

/**
 * The request body. `asin`, `marketplace` and `zip` are then checked by the details endpoint's own
 * parameter rules, so a watch accepts exactly what a details call accepts.
 */
export function watchCreateBody(minSeconds: number, allowPrivate = false) {
  return z.strictObject({
    // The details parameters' own rules, so that the document says what is then refused (probe
    // EY); lower case is taken, as in a query.
    // Spaces around a value are dropped, as in a query (probe FA), then the details rules apply.
    asin: z.string().trim().regex(/^[A-Za-z0-9]{10}$/).describe(
      "The product to watch (as for /v1/products/details)",
    ),
    marketplace: z.string().trim().regex(/^[A-Za-z]{2}$/).optional().describe(
      `Marketplace code, one of ${MARKETPLACE_CODES.join(", ")} (default US)`,
    ),
    zip: z.string().trim().regex(ZIP).optional().describe(
      "Delivery postcode (as for /v1/products/details)",
    ),
    every_seconds: z.int().min(minSeconds).max(MAX_EVERY_SECONDS).describe(
      `Seconds between refreshes; at least WATCH_MIN_SECONDS (this server: ${minSeconds})`,
    ),
    webhook_url: z.string().max(2_048).describe(
      allowPrivate
        ? "http(s) URL that receives the signed events (this server allows private hosts)"
        : "http(s) URL that receives the signed events; private and loopback hosts are refused",
    ),
    on: z.array(z.enum(WATCH_FIELDS)).min(1).max(WATCH_FIELDS.length).describe(
      "Fields whose change sends an event; one named twice counts once",
    ),
  });
}

/** What a refresh compares: the watched fields of a details answer. */
export const WatchedValues = z.object({
  price: Price.nullable(),
  in_stock: z.boolean().nullable().describe(
    "null while no refresh has read a page that shows its stock (a change from or to null sends no event)",
  ),
  rank: z.array(BestsellersRank),
});
export type WatchedValues = z.infer<typeof WatchedValues>;

export const DeliveryNote = z.object({
  event_id: z.string(),
  at: z.string().describe("When the attempt ended (ISO 8601)"),
  attempt: z.int().min(1),
  result: z.string().describe('"delivered (HTTP 204)", "HTTP 500", "timeout", "refused: …"'),
  delivered: z.boolean(),
});
export type DeliveryNote = z.infer<typeof DeliveryNote>;

export const WatchView = z.object({
  id: z.string(),
  asin: z.string(),
  marketplace: z.string(),
  zip: z.string().nullable(),
  every_seconds: z.int(),
  webhook_url: z.string(),
  on: z.array(z.enum(WATCH_FIELDS)),
  status: z.enum(["active", "paused"]).describe(
    "paused: the last refresh was skipped (no credits left, key revoked, …); it resumes by itself",
  ),
  paused_reason: z.string().nullable(),
  created_at: z.string(),
  next_refresh_at: z.string(),
  last_refresh_at: z.string().nullable(),
  refreshes: z.int().describe("Refreshes charged so far"),
  last: WatchedValues.nullable().describe("The watched fields at the last refresh"),
  last_error: z.string().nullable(),
  deliveries: z.array(DeliveryNote).describe("The latest webhook delivery attempts, newest first"),
});
export type WatchView = z.infer<typeof WatchView>;

export const WatchCreated = WatchView.extend({
  secret: z.string().describe(
    "Signs every event (Shelf-Signature); shown here only, keep it with the receiver",
  ),
});

export const WatchList = z.object({ count: z.int(), watches: z.array(WatchView) });

export const WatchDeleted = z.object({ id: z.string(), deleted: z.literal(true) });

/** The body POSTed to a webhook. */
export const WatchEvent = z.object({
  event_id: z.string(),
  watch_id: z.string(),
  asin: z.string(),
  marketplace: z.string(),
  observed_at: z.string(),
  changed: z.array(z.enum(WATCH_FIELDS)),
  before: WatchedValues,
  after: WatchedValues,
});
export type WatchEvent = z.infer<typeof WatchEvent>;
