/**
 * `deno task demo`: Shelf on loopback over real Amazon pages with no network (demo/server.ts).
 * Prints the key and curl commands. PORT picks the port (default 8000; 0 takes a free one).
 */
import { opsLog } from "../core/ops_log.ts";
import { demoCalls } from "./calls.ts";
import { startDemo } from "./server.ts";

const given = Deno.env.get("PORT") ?? "8000";
const port = /^[0-9]{1,5}$/.test(given) ? Number(given) : NaN;
if (!(port >= 0 && port <= 65535)) {
  console.error(`demo: PORT must be a port number: current value is ${JSON.stringify(given)}`);
  Deno.exit(1);
}

let demo: Awaited<ReturnType<typeof startDemo>>;
try {
  demo = await startDemo({ port, accessLog: opsLog });
} catch (e) {
  const why = (e instanceof Error ? e.message : String(e)).split("\n")[0];
  console.error(`demo: cannot listen on 127.0.0.1 port ${port}: ${why} (PORT=0 takes a free one)`);
  Deno.exit(1);
}
const lines = [
  `Shelf demo on ${demo.origin}/ · store in memory (gone on exit) · upstream: the sample archive ` +
  `demo/sample.warc.gz (real Amazon pages, no network)`,
  `account ${demo.accountId} on the growth plan, key:`,
  ``,
  `  KEY=${demo.key}`,
  ``,
  ...demoCalls(demo.origin).filter((c) => c.printed).flatMap((c) => [
    `# ${c.what}`,
    `curl -s -H "x-api-key: $KEY" "${c.path}"`,
  ]),
  ``,
  `Docs: ${demo.origin}/docs · usage: curl -s -H "x-api-key: $KEY" ${demo.origin}/v1/usage · Ctrl-C stops.`,
  `Access log lines (JSON) follow:`,
];
console.log(lines.join("\n"));
