/**
 * The metering-spread benchmark's subject (issue 15.3): the real app on a real KV file with a
 * data source that answers at once, and three kinds of callers: one hot account with one key,
 * ACCOUNTS accounts with a key each, and one account holding FIFTY keys. Prints the URL and the
 * key lists (one JSON line), then serves.
 */
import { benchApp } from "./bench_app.ts";

const ACCOUNTS = Number(Deno.env.get("BENCH_ACCOUNTS") ?? 10_000);
const { app, deps } = await benchApp(50);
const hot = await deps.accounts.create("hot@example.com", "bench");
const hotKey = (await deps.accounts.createKey(hot.id)).value;
const spread: string[] = [];
for (let i = 0; i < ACCOUNTS; i += 100) {
  const batch = await Promise.all(
    Array.from({ length: Math.min(100, ACCOUNTS - i) }, async (_, j) => {
      const a = await deps.accounts.create(`spread${i + j}@example.com`, "bench");
      return (await deps.accounts.createKey(a.id)).value;
    }),
  );
  spread.push(...batch);
}
const many = await deps.accounts.create("fifty@example.com", "bench");
const fifty: string[] = [];
for (let i = 0; i < 50; i++) fifty.push((await deps.accounts.createKey(many.id)).value);
const server = Deno.serve({ port: 0, hostname: "127.0.0.1", onListen() {} }, app.fetch);
console.log(JSON.stringify({
  url: `http://127.0.0.1:${server.addr.port}/v1/products/offers?asin=B07H57DNVV`,
  hot: hotKey,
  spread,
  fifty,
}));
for (const sig of ["SIGINT", "SIGTERM"] as const) Deno.addSignalListener(sig, () => Deno.exit(0));
