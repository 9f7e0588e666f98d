/**
 * The gateway benchmark's subject: the real app on a real KV file, with a data source that
 * answers at once, and one account whose key every request uses (the hot-account case).
 */
import { benchApp } from "./bench_app.ts";

const { app, deps } = await benchApp(1);
const account = await deps.accounts.create("bench@example.com", "bench");
const { value } = await deps.accounts.createKey(account.id);
const server = Deno.serve({ port: 0, hostname: "127.0.0.1", onListen() {} }, app.fetch);
console.log(
  JSON.stringify({
    url: `http://127.0.0.1:${server.addr.port}/v1/products/offers?asin=B07H57DNVV`,
    key: value,
  }),
);
for (const sig of ["SIGINT", "SIGTERM"] as const) Deno.addSignalListener(sig, () => Deno.exit(0));
