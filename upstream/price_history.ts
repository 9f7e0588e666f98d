/**
 * Price history (issue 17.3): every successful details fetch appends an observation of the
 * product (time, price, in stock, rating, reviews count, ranks) to the store, whoever asked;
 * `/v1/products/history` reads them back newest first. The append is not awaited by the call
 * that produced it, so history never slows a details answer (bench: `deno task bench history`).
 * Only the product asked for is recorded, and only an observation that fits the history answer's
 * schema: a page naming another ASIN (a redirect, or a page made to) writes nothing into that
 * ASIN's history, and a value the answer could not carry never reaches the store, where it would
 * fail every later read. Each product keeps at most HISTORY_POINTS observations: on its first
 * append this process remembers and every TRIM_EVERY after, the older ones are deleted (so a
 * product whose count was forgotten among many others is still trimmed). HISTORY=off turns all of
 * it off: nothing is written and the endpoint answers 404.
 */
import type { DataRequest, DataSource } from "./data_source.ts";
import type { Clock } from "../metering/clock.ts";
import { KV } from "../metering/kv_layout.ts";
import { ApiError } from "../core/api_error.ts";
import { checkedAnswer } from "./checked_answer.ts";
import type { ProductPage } from "../schemas/pages.ts";
import { HistoryPoint } from "../schemas/endpoints.ts";
import { inStockRead } from "./envelopes.ts";
import type { z } from "zod";

export const HISTORY_POINTS = 1_000;
const TRIM_EVERY = 50;

export type Observation = z.infer<typeof HistoryPoint>;

/** Identical readings of a product within this long are one reading (a shared upstream fetch). */
const SAME_READING_MS = 10_000;

export class HistorySource implements DataSource {
  readonly #inner: DataSource;
  readonly #kv: Deno.Kv;
  readonly #clock: Clock;
  readonly #enabled: boolean;
  readonly #onError: (e: unknown) => void;
  /** Appends per product since its last trim, in this process (bounded: cleared when large). */
  readonly #appends = new Map<string, number>();
  /** Each product's last reading in this process, and when (bounded: cleared when large). */
  readonly #lastReading = new Map<
    string,
    { reading: string; at: number; written: Promise<boolean> }
  >();
  /** The last observation time used: times are made strictly increasing, so order is exact. */
  #lastAt = 0;
  /** Appends not yet settled, so that a test or a drain can wait for them. */
  readonly #pending = new Set<Promise<void>>();

  constructor(
    inner: DataSource,
    kv: Deno.Kv,
    clock: Clock,
    opts: { enabled?: boolean; onError?: (e: unknown) => void } = {},
  ) {
    this.#inner = inner;
    this.#kv = kv;
    this.#clock = clock;
    this.#enabled = opts.enabled ?? true;
    this.#onError = opts.onError ?? (() => {});
  }

  async fetch(req: DataRequest): Promise<unknown> {
    if (req.endpoint.name === "history") return await this.#history(req);
    const body = await this.#inner.fetch(req);
    const asked = String(req.params.asin ?? "");
    // Only what the marketplace shows its default location: a point carries no postcode, and a
    // client's chosen postcode (its prices, its stock) would otherwise be everyone's history.
    const located = req.params.zip !== undefined;
    if (
      this.#enabled && req.endpoint.name === "details" && !located &&
      (body as ProductPage).asin === asked && accepted(req, body)
    ) {
      const mp = String(req.params.marketplace ?? "US");
      const done = this.#append(mp, body as ProductPage).catch(this.#onError)
        .finally(() => this.#pending.delete(done));
      this.#pending.add(done);
    }
    return body;
  }

  /** Waits for the appends started so far. */
  async settled(): Promise<void> {
    await Promise.all([...this.#pending]);
  }

  async #append(mp: string, p: ProductPage & { missing?: string[] }): Promise<void> {
    const now = Math.max(this.#clock.now(), this.#lastAt + 1);
    this.#lastAt = now;
    const point: Observation = {
      observed_at: new Date(now).toISOString(),
      price: p.price,
      // Not read off the page, no point of the product's history (probe CA: its default false
      // wrote "out of stock" into the history every account reads).
      in_stock: inStockRead(p),
      rating: p.rating,
      reviews_count: p.reviews_count,
      bestsellers_rank: p.bestsellers_rank,
    };
    if (!HistoryPoint.safeParse(point).success) return;
    // One upstream fetch shared by several calls is one reading: each caller's answer wrote a point
    // of its own, the same values 1 ms apart, using up the product's points (probe EJ).
    const product = `${mp}|${p.asin}`;
    const { observed_at: _, ...values } = point;
    const reading = JSON.stringify(values);
    let last = this.#lastReading.get(product);
    // The same reading, being written or written: this one only if that write fails (probes EK,
    // EL: a failed write dropped the readings of the calls that shared its fetch), and then only
    // the first of those waiting writes it; the others wait on that one (probe EN).
    while (last && last.reading === reading && now - last.at < SAME_READING_MS) {
      if (await last.written) return;
      const next = this.#lastReading.get(product);
      if (!next || next === last) break;
      last = next;
    }
    if (this.#lastReading.size > 10_000) this.#lastReading.clear();
    let written!: (ok: boolean) => void;
    const mine = { reading, at: now, written: new Promise<boolean>((r) => (written = r)) };
    this.#lastReading.set(product, mine);
    try {
      await this.#kv.set(KV.history(mp, p.asin, now, crypto.randomUUID().slice(0, 8)), point);
      written(true);
    } catch (e) {
      written(false);
      if (this.#lastReading.get(product) === mine) this.#lastReading.delete(product);
      throw e;
    }
    const before = this.#appends.get(product);
    const n = (before ?? 0) + 1;
    if (this.#appends.size > 10_000) this.#appends.clear();
    this.#appends.set(product, n % TRIM_EVERY);
    if (before === undefined || n % TRIM_EVERY === 0) await this.#trim(mp, p.asin);
  }

  /** Deletes all but the newest HISTORY_POINTS observations of a product. */
  async #trim(mp: string, asin: string): Promise<void> {
    let seen = 0;
    let op = this.#kv.atomic();
    let ops = 0;
    for await (const e of this.#kv.list({ prefix: KV.historyOf(mp, asin) }, { reverse: true })) {
      if (++seen <= HISTORY_POINTS) continue;
      op.delete(e.key);
      if (++ops === 100) {
        await op.commit();
        op = this.#kv.atomic();
        ops = 0;
      }
    }
    if (ops) await op.commit();
  }

  async #history(req: DataRequest): Promise<unknown> {
    if (!this.#enabled) {
      throw new ApiError(
        404,
        "not_found",
        "Price history is turned off on this deployment (HISTORY=off).",
      );
    }
    const mp = String(req.params.marketplace ?? "US");
    const asin = String(req.params.asin);
    const points: Observation[] = [];
    const list = this.#kv.list<Observation>({ prefix: KV.historyOf(mp, asin) }, {
      reverse: true,
      limit: HISTORY_POINTS,
    });
    for await (const e of list) points.push(e.value);
    return { asin, marketplace: mp, points };
  }
}

/**
 * Whether the answer passes the checks a caller's answer must (checked_answer.ts): one the route
 * or a watch then refuses, uncharged, was already a point of the history every account reads
 * (probe EJ). The caller makes the same check again, and logs a refusal.
 */
function accepted(req: DataRequest, body: unknown): boolean {
  try {
    checkedAnswer(req.endpoint, body, () => {});
    return true;
  } catch {
    return false;
  }
}
