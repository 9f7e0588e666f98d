/**
 * Shelf wired to a fake marketplace for end-to-end tests: the real upstream source and browser
 * transport (`UPSTREAM=origin:` as main.ts builds it) behind the real server of test_server.ts.
 * Retries and timeouts are shortened so that failure tests run in well under a second each.
 */
import { ControlledSource, startServer, type TestServer } from "./test_server.ts";
import { FakeMarketplace } from "./fake_marketplace.ts";
import type { DataRequest, DataSource } from "../upstream/data_source.ts";
import type { BrowserOptions } from "../upstream/browser_transport.ts";
import { transportFor } from "../upstream/select.ts";
import { CALL_TIMES, UpstreamSource } from "../upstream/source.ts";
import type { Transport } from "../upstream/transport.ts";
import type { PageReader } from "../upstream/page_pool.ts";
import type { Plans } from "../metering/plans.ts";
import type { Clock } from "../metering/clock.ts";

/** Hands every call to another data source; test_server.ts takes a ControlledSource. */
export class PassThroughSource extends ControlledSource {
  constructor(readonly inner: DataSource) {
    super();
  }
  override fetch(req: DataRequest): Promise<unknown> {
    this.calls++;
    return this.inner.fetch(req);
  }
}

export const FAST: BrowserOptions = { timeoutMs: 1_500, retries: 2, backoffMs: 5 };

/** Rig options for a test whose pages must not time out on a loaded machine (FAST's 1.5 s can). */
export const PATIENT = { browser: { timeoutMs: 30_000 } };

/** Watch loops fast enough for a test: refreshes every second, polls every 50 ms. */
export const FAST_WATCHES = {
  minSeconds: 1,
  allowPrivate: true,
  run: true,
  scheduler: { pollMs: 50, rateRetryMs: 100 },
  webhooks: { pollMs: 50, retryMs: 100, maxDelayMs: 400 },
};

export interface Rig extends AsyncDisposable {
  fake: FakeMarketplace;
  server: TestServer;
  transport: Transport;
  key: string;
  accountId: string;
  /** GET with the rig's key; returns status, JSON body and headers. */
  call(path: string): Promise<{ status: number; body: Record<string, unknown>; headers: Headers }>;
}

/** The credits the rig's account has used, as /v1/usage answers them. */
export function usedCredits(rig: Rig): Promise<number> {
  return rig.call("/v1/usage").then((u) => (u.body as { requests_used: number }).requests_used);
}

export async function startRig(opts: {
  fake?: FakeMarketplace;
  plan?: string;
  env?: Record<string, string>;
  browser?: BrowserOptions;
  wrap?: (source: DataSource, kv: Deno.Kv) => DataSource;
  upstream?: string;
  plans?: Plans;
  adminToken?: string;
  /** Where pages are read (default inline); the rig closes it. */
  reader?: PageReader;
  watches?: NonNullable<Parameters<typeof startServer>[0]>["watches"];
  accessLog?: (line: Record<string, unknown>) => void;
  /** The meter's clock (default the system's). */
  clock?: Clock;
  /** A data call's time limits (default upstream/source.ts CALL_TIMES). */
  times?: typeof CALL_TIMES;
} = {}): Promise<Rig> {
  const fake = opts.fake ?? new FakeMarketplace();
  const env = new Map(Object.entries(opts.env ?? {}));
  const transport = transportFor(opts.upstream ?? fake.upstream, { get: (k) => env.get(k) }, {
    ...FAST,
    ...opts.browser,
  });
  const upstream = new UpstreamSource(transport, opts.reader, opts.times);
  const passThrough = new PassThroughSource(upstream);
  const server = await startServer({
    source: passThrough,
    plans: opts.plans,
    adminToken: opts.adminToken,
    watches: opts.watches,
    accessLog: opts.accessLog,
    clock: opts.clock,
  });
  if (opts.wrap) (passThrough as { inner: DataSource }).inner = opts.wrap(upstream, server.kv);
  const { key, id } = await server.account(opts.plan ?? "growth");
  return {
    fake,
    server,
    transport,
    key,
    accountId: id,
    async call(path) {
      const res = await server.get(path, key);
      const text = await res.text();
      let body: Record<string, unknown>;
      try {
        body = JSON.parse(text);
      } catch {
        body = { raw: text };
      }
      return { status: res.status, body, headers: res.headers };
    },
    async [Symbol.asyncDispose]() {
      await server[Symbol.asyncDispose]();
      await transport.close?.();
      opts.reader?.close();
      if (!opts.fake) await fake[Symbol.asyncDispose]();
    },
  };
}
