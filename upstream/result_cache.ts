/**
 * A result cache in KV in front of a data source: a repeat of the same call (same endpoint, same
 * parameters) within the endpoint's TTL is answered from the store without an upstream fetch.
 * It is still charged by the route as any call is. Answers over 60 KB are not cached (a KV value
 * holds at most 64 KiB), and neither are searches with `limit`, whose cost is one credit per
 * upstream page fetched, nor `/v1/scrape`, nor an answer that fails the endpoint's schema.
 */
import type { DataRequest, DataSource } from "./data_source.ts";
import type { Clock } from "../metering/clock.ts";
import { KV } from "../metering/kv_layout.ts";
import { hashKey } from "../metering/api_key.ts";

const MINUTE = 60_000;

/** How long an answer stays fresh, per endpoint name; absent means never cached. */
export const CACHE_TTL_MS: Readonly<Record<string, number>> = {
  search: 10 * MINUTE,
  category: 10 * MINUTE,
  seller_products: 30 * MINUTE,
  details: 15 * MINUTE,
  offers: 5 * MINUTE,
  reviews: 60 * MINUTE,
  reviews_top: 60 * MINUTE,
  review_details: 6 * 60 * MINUTE,
  bestsellers: 60 * MINUTE,
  categories: 24 * 60 * MINUTE,
  deals: 10 * MINUTE,
  deal_products: 10 * MINUTE,
  seller_profile: 6 * 60 * MINUTE,
  promotion: 60 * MINUTE,
  gtin_to_asin: 24 * 60 * MINUTE,
  asin_to_gtin: 24 * 60 * MINUTE,
};

const MAX_CACHED_BYTES = 60_000;

interface Entry {
  at: number;
  json: string;
}

// The age of answers served from the cache, for the route's `Age` header.
const ages = new WeakMap<object, number>();

/** Seconds since a cached answer was fetched, or undefined for a fresh one. */
export function cachedAge(body: unknown): number | undefined {
  return body && typeof body === "object" ? ages.get(body) : undefined;
}

export class CachingSource implements DataSource {
  readonly #inner: DataSource;
  readonly #kv: Deno.Kv;
  readonly #clock: Clock;

  constructor(inner: DataSource, kv: Deno.Kv, clock: Clock) {
    this.#inner = inner;
    this.#kv = kv;
    this.#clock = clock;
  }

  async fetch(req: DataRequest): Promise<unknown> {
    const ttl = CACHE_TTL_MS[req.endpoint.name];
    if (!ttl || (req.endpoint.name === "search" && Number(req.params.limit ?? 0) > 0)) {
      return this.#inner.fetch(req);
    }
    const key = KV.resultCache(req.endpoint.name, cacheId(req.params));
    const now = this.#clock.now();
    const hit = await this.#read(key);
    if (hit && now - hit.at < ttl) {
      const body = JSON.parse(hit.json);
      // Never below 0 (RFC 9111): an entry another instance wrote by a clock ahead of this one's
      // said `Age: -5` (probe FK).
      ages.set(body, Math.max(0, Math.floor((now - hit.at) / 1000)));
      return body;
    }
    const body = await this.#inner.fetch(req);
    // What fails the endpoint's schema is a 502 at the route; kept, it would be one for the TTL.
    if (!req.endpoint.response.safeParse(body).success) return body;
    const json = JSON.stringify(body);
    if (new TextEncoder().encode(json).length <= MAX_CACHED_BYTES) {
      await this.#kv.set(key, { at: now, json } satisfies Entry, { expireIn: ttl }).catch(() => {});
    }
    return body;
  }

  async #read(key: Deno.KvKey): Promise<Entry | null> {
    try {
      return (await this.#kv.get<Entry>(key, { consistency: "eventual" })).value;
    } catch {
      return null; // a store that cannot answer is a cache miss, not a failed call
    }
  }
}

/** The same parameters in any order give the same id. */
function cacheId(params: Record<string, unknown>): string {
  const sorted = Object.keys(params).sort().map((k) => [k, params[k]]);
  return hashKey(JSON.stringify(sorted));
}
