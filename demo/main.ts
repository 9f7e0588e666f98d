/**
 * `deno task demo`: Shelf on loopback over a throw-away in-memory store, its upstream a WARC
 * archive of real Amazon pages shipped in demo/ (sample.warc.gz), so every printed call answers
 * with real data and no network. Creates an account and a key, prints the key and curl commands.
 * PORT picks the port (default 8000; 0 takes a free one).
 */
import { createApp } from "../app.ts";
import { builtinPlans } from "../metering/plans.ts";
import { systemClock } from "../metering/clock.ts";
import { dataSourceFor } from "../upstream/select.ts";
import { opsLog } from "../core/ops_log.ts";
import { demoCalls } from "./calls.ts";

const archive = decodeURIComponent(new URL("./sample.warc.gz", import.meta.url).pathname);
const port = Number(Deno.env.get("PORT") ?? 8000);
if (!Number.isInteger(port) || port < 0 || port > 65535) {
  console.error(`demo: PORT must be a port number: current value is ${Deno.env.get("PORT")}`);
  Deno.exit(1);
}

const kv = await Deno.openKv(":memory:");
const { app, deps } = createApp({
  kv,
  plans: builtinPlans(),
  clock: systemClock,
  dataSource: dataSourceFor(`archive:${archive}`, { get: () => undefined }),
  accessLog: opsLog,
});
const account = await deps.accounts.create("demo@example.com", "starter");
const { value: key } = await deps.accounts.createKey(account.id, { name: "demo" });

Deno.serve({
  port,
  hostname: "127.0.0.1",
  onListen: ({ port }) => {
    const origin = `http://127.0.0.1:${port}`;
    const lines = [
      `Shelf demo on ${origin}/ · store in memory (gone on exit) · upstream: the sample archive ` +
      `demo/sample.warc.gz (real Amazon pages, no network)`,
      `account ${account.id} on the starter plan, key:`,
      ``,
      `  KEY=${key}`,
      ``,
      ...demoCalls(origin).flatMap((c) => [
        `# ${c.what}`,
        `curl -s -H "x-api-key: $KEY" "${c.path}"`,
      ]),
      ``,
      `Docs: ${origin}/docs · usage: curl -s -H "x-api-key: $KEY" ${origin}/v1/usage · Ctrl-C stops.`,
      `Access log lines (JSON) follow:`,
    ];
    console.log(lines.join("\n"));
  },
}, app.fetch);
