/**
 * Page workers yield the CPU to the serving thread: on Linux each runs at nice 10, the thread
 * that serves HTTP at the process's own priority. Read from /proc of a Shelf started as
 * operators start it.
 */
import assert from "node:assert/strict";
import { FakeMarketplace } from "./fake_marketplace.ts";
import { spawnShelf } from "./proof/shelf_process.ts";
import { plansFile } from "./proof/plans_file.ts";
import { createAccount } from "./proof/admin_client.ts";

/** Name and nice value of every thread of `pid`. */
function threads(pid: number): { name: string; nice: number; main: boolean }[] {
  return [...Deno.readDirSync(`/proc/${pid}/task`)].map((t) => {
    const stat = Deno.readTextFileSync(`/proc/${pid}/task/${t.name}/stat`);
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return {
      name: stat.slice(stat.indexOf("(") + 1, stat.lastIndexOf(")")),
      nice: Number(fields[16]),
      main: t.name === String(pid),
    };
  });
}

Deno.test({
  name: "page workers run at nice 10 below the serving thread (Linux)",
  ignore: Deno.build.os !== "linux",
  async fn() {
    await using fake = new FakeMarketplace();
    for (const asin of ["B000000001", "B000000002"]) {
      fake.page(`https://www.amazon.com/dp/${asin}`, "product/amazon.com__weih-earphone1.html");
    }
    const dir = await Deno.makeTempDir();
    const plans = await plansFile(1000, 100);
    const token = crypto.randomUUID();
    {
      await using shelf = await spawnShelf({
        KV_PATH: `${dir}/s.kv`,
        UPSTREAM: fake.upstream,
        PLANS_FILE: plans,
        ADMIN_TOKEN: token,
        PARSE_WORKERS: "2",
      });
      const { key } = await createAccount(shelf.url, token);
      // Two calls at once: each needs a worker, so both are started.
      await Promise.all(["B000000001", "B000000002"].map(async (asin) => {
        const r = await fetch(`${shelf.url}/v1/products/details?asin=${asin}`, {
          headers: { "x-api-key": key },
        });
        await r.body?.cancel();
        assert.equal(r.status, 200);
      }));
      const all = threads(shelf.pid);
      const workers = all.filter((t) => t.name.startsWith("worker-"));
      assert.equal(workers.length, 2, JSON.stringify(all));
      assert.deepEqual(workers.map((t) => t.nice), [10, 10]);
      assert.equal(all.find((t) => t.main)?.nice, 0);
    }
    await Deno.remove(dir, { recursive: true });
    await Deno.remove(plans);
  },
});
