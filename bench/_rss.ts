import { FakeMarketplace } from "../tests/fake_marketplace.ts";
import { spawnShelf } from "../tests/proof/shelf_process.ts";
import { plansFile } from "../tests/proof/plans_file.ts";
import { createAccount } from "../tests/proof/admin_client.ts";
import { rssMiB } from "./process_stats.ts";
const PAGE = "product/amazon.com__pricechecker-charmast-powerbank.html";
const asin = (i: number) => `B0${String(i).padStart(8, "0")}`;
await using fake = new FakeMarketplace();
for (let i = 0; i < 4000; i++) fake.page(`https://www.amazon.com/dp/${asin(i)}`, PAGE);
const kvPath = await Deno.makeTempFile({ suffix: ".kv" });
const plans = await plansFile(10_000_000, 100_000);
const token = crypto.randomUUID();
await using shelf = await spawnShelf({ KV_PATH: kvPath, UPSTREAM: fake.upstream, PLANS_FILE: plans, ADMIN_TOKEN: token });
console.log("started", rssMiB(shelf.pid).toFixed(0));
const { key } = await createAccount(shelf.url, token);
let next = 0;
async function load(s: number, c: number) { const stop = performance.now() + s * 1000; let n = 0;
  await Promise.all(Array.from({ length: c }, async () => { while (performance.now() < stop) { const r = await fetch(`${shelf.url}/v1/products/details?asin=${asin(next++ % 4000)}`, { headers: { "x-api-key": key } }); await r.arrayBuffer(); n++; } }));
  return n; }
await load(1, 2);
console.log("after 2-client warm-up", rssMiB(shelf.pid).toFixed(0));
await new Promise((r) => setTimeout(r, 2000));
console.log("idle 2 s later", rssMiB(shelf.pid).toFixed(0));
for (const c of [2, 4, 8, 16]) {
  const samples: number[] = [];
  const stop = performance.now() + 4000;
  const sampler = (async () => { while (performance.now() < stop) { await new Promise((r) => setTimeout(r, 250)); samples.push(rssMiB(shelf.pid)); } })();
  await Promise.all([load(4, c), sampler]);
  samples.sort((a, b) => a - b);
  console.log(`${c} clients: median RSS ${samples[samples.length >> 1].toFixed(0)} MiB`);
}
await Deno.remove(kvPath); await Deno.remove(plans);
