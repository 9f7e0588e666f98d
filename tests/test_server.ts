/**
 * A real Shelf server on loopback for tests: a temporary KV file, an injected clock, and a data
 * source that answers at once with a valid body or fails on demand. `await using` stops it.
 */
import { createApp } from "../app.ts";
import type { Deps } from "../routes/deps.ts";
import type { Log } from "../core/log.ts";
import { type Clock, ManualClock, systemClock } from "../metering/clock.ts";
import { builtinPlans, type Plans } from "../metering/plans.ts";
import type { DataRequest, DataSource } from "../upstream/data_source.ts";
import { ApiError } from "../core/api_error.ts";
import type { Accounts } from "../metering/accounts.ts";
import { removeKvFiles } from "../core/kv_files.ts";

/** Answers every endpoint with a small valid body; `failWith` makes the next calls fail. */
export class ControlledSource implements DataSource {
  failWith: ApiError | Error | null = null;
  /** Upstream pages a search with `limit` pretends to fetch, each charged through chargePage. */
  searchPages = 1;
  calls = 0;
  delayMs = 0;
  /** The validated parameters of the last call. */
  lastParams: Record<string, unknown> | null = null;

  async fetch(req: DataRequest): Promise<unknown> {
    this.calls++;
    this.lastParams = req.params;
    if (this.delayMs) await new Promise((r) => setTimeout(r, this.delayMs));
    if (this.failWith) throw this.failWith;
    const mp = (req.params.marketplace as string) ?? "US";
    switch (req.endpoint.name) {
      case "search": {
        const limit = req.params.limit as number;
        let pages = 1;
        while (limit > 0 && pages < this.searchPages && await req.chargePage()) pages++;
        return {
          page: req.params.page,
          sort: req.params.sort ?? null,
          count: 0,
          query: req.params.query,
          results: [],
          marketplace: mp,
          has_next_page: pages < this.searchPages,
          total_results: 0,
        };
      }
      case "offers":
        return {
          url: `https://www.amazon.com/dp/${req.params.asin}`,
          asin: req.params.asin,
          count: 0,
          offers: [],
        };
      case "deals":
        return { count: 0, results: [], marketplace: mp };
      case "scrape":
        return { url: req.params.url, type: "product", marketplace: mp, data: {} };
      default:
        throw new ApiError(
          502,
          "upstream_error",
          `the test source has no body for ${req.endpoint.name}`,
        );
    }
  }
}

export interface TestServer {
  url: string;
  clock: Clock;
  source: ControlledSource;
  accounts: Accounts;
  deps: Deps;
  kvPath: string;
  kv: Deno.Kv;
  errors: string[];
  /** Creates an account on `plan` and returns its id and one key value. */
  account(plan?: string): Promise<{ id: string; key: string; keyId: string }>;
  get(path: string, key?: string | null, init?: RequestInit): Promise<Response>;
  [Symbol.asyncDispose](): Promise<void>;
}

export async function startServer(opts: {
  clock?: Clock;
  plans?: Plans;
  adminToken?: string;
  kvPath?: string;
  source?: ControlledSource;
  smtp?: Parameters<typeof createApp>[0]["smtp"];
  signup?: "open" | "closed" | "verify";
  trustProxy?: boolean | number;
  publicUrl?: string;
  corsOrigins?: null | "*" | string[];
  accessLog?: (line: Record<string, unknown>) => void;
  watches?: Parameters<typeof createApp>[0]["watches"];
  bodyReading?: Parameters<typeof createApp>[0]["bodyReading"];
  /** Aborted as main.ts aborts it at the end of a drain. */
  stopping?: AbortSignal;
} = {}): Promise<TestServer> {
  const kvPath = opts.kvPath ?? await Deno.makeTempFile({ suffix: ".kv" });
  const kv = await Deno.openKv(kvPath);
  const clock = opts.clock ?? systemClock;
  const source = opts.source ?? new ControlledSource();
  const errors: string[] = [];
  const log: Log = {
    error: (m, d) => void errors.push(d instanceof Error ? `${m}: ${d.message}` : m),
  };
  const { app, deps } = createApp({
    kv,
    plans: opts.plans ?? builtinPlans(),
    clock,
    dataSource: source,
    adminToken: opts.adminToken,
    log,
    smtp: opts.smtp,
    signup: opts.signup ?? "open",
    trustProxy: opts.trustProxy,
    publicUrl: opts.publicUrl,
    corsOrigins: opts.corsOrigins,
    accessLog: opts.accessLog,
    watches: opts.watches,
    bodyReading: opts.bodyReading,
    stopping: opts.stopping,
  });
  const server = Deno.serve({ port: 0, hostname: "127.0.0.1", onListen() {} }, app.fetch);
  const url = `http://127.0.0.1:${server.addr.port}`;
  return {
    url,
    clock,
    source,
    accounts: deps.accounts,
    deps,
    kvPath,
    kv,
    errors,
    async account(plan = "free") {
      const a = await deps.accounts.create(`u${crypto.randomUUID()}@example.com`, plan);
      const { key, value } = await deps.accounts.createKey(a.id, { name: "test" });
      return { id: a.id, key: value, keyId: key.id };
    },
    get(path, key, init = {}) {
      const headers = new Headers(init.headers);
      if (key) headers.set("x-api-key", key);
      return fetch(url + path, { ...init, headers });
    },
    async [Symbol.asyncDispose]() {
      await server.shutdown();
      await deps.delivery?.stop();
      await deps.watches.stop();
      try {
        kv.close();
      } catch { /* a test closed it already */ }
      if (!opts.kvPath) await removeKvFiles(kvPath);
    },
  };
}

export { ManualClock };

/** Sends `n` requests at once and returns their statuses (bodies consumed). */
export async function burst(n: number, send: () => Promise<Response>): Promise<number[]> {
  return await Promise.all(Array.from({ length: n }, async () => {
    const r = await send();
    await r.body?.cancel();
    return r.status;
  }));
}

export function count<T>(xs: T[], x: T): number {
  return xs.filter((v) => v === x).length;
}

/**
 * Starts an offers call on `key` whose upstream work fails after `delayMs`, and waits until it
 * has been admitted and charged; its answer is still to come.
 */
export async function failingCallUnderWay(
  s: TestServer,
  key: string,
  delayMs: number,
): Promise<{ answer: Promise<Response> }> {
  s.source.delayMs = delayMs;
  s.source.failWith = new ApiError(502, "upstream_error", "The marketplace failed.");
  const answer = s.get("/v1/products/offers?asin=B07H57DNVV", key);
  await new Promise((r) => setTimeout(r, delayMs / 3));
  return { answer };
}

/** An answer's status and metering headers (its body dropped), for comparing whole. */
export async function meterHeadersOf(r: Promise<Response>) {
  const res = await r;
  await res.body?.cancel();
  return {
    status: res.status,
    cost: res.headers.get("x-credits-cost"),
    remaining: res.headers.get("x-credits-remaining"),
    reset: res.headers.get("x-credits-reset"),
    rate: res.headers.get("ratelimit"),
  };
}
