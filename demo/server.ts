/**
 * The demo's server: Shelf over a throw-away in-memory store, its upstream the WARC archive of
 * real corpus pages in demo/sample.warc.gz, with one account on the growth plan and one key.
 * Used by `deno task demo` and by the OpenAPI examples' builder.
 */
import { createApp } from "../app.ts";
import { builtinPlans } from "../metering/plans.ts";
import { systemClock } from "../metering/clock.ts";
import { dataSourceFor } from "../upstream/select.ts";
import { HistorySource } from "../upstream/price_history.ts";

export interface Demo {
  origin: string;
  accountId: string;
  key: string;
  [Symbol.asyncDispose](): Promise<void>;
}

export async function startDemo(
  opts: { port: number; accessLog?: (line: Record<string, unknown>) => void },
): Promise<Demo> {
  const archive = decodeURIComponent(new URL("./sample.warc.gz", import.meta.url).pathname);
  const kv = await Deno.openKv(":memory:");
  const { app, deps } = createApp({
    kv,
    plans: builtinPlans(),
    clock: systemClock,
    dataSource: new HistorySource(
      dataSourceFor(`archive:${archive}`, { get: () => undefined }),
      kv,
      systemClock,
    ),
    accessLog: opts.accessLog,
  });
  const account = await deps.accounts.create("demo@example.com", "growth");
  const { value: key } = await deps.accounts.createKey(account.id, { name: "demo" });
  const server = Deno.serve({ port: opts.port, hostname: "127.0.0.1", onListen() {} }, app.fetch);
  return {
    origin: `http://127.0.0.1:${server.addr.port}`,
    accountId: account.id,
    key,
    async [Symbol.asyncDispose]() {
      await server.shutdown();
      kv.close();
    },
  };
}
