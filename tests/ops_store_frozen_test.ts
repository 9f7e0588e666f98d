/**
 * A process frozen inside a commit (SIGSTOP, `docker pause`) keeps SQLite's write lock on a KV file
 * that several processes share, and every other process's writes are refused until it resumes
 * (probe AV): SQLite's lock, not Shelf's turns, which a frozen holder delays by 50 ms only. The
 * holder here is a connection of the test's own that holds the lock as such a process would.
 * Paid calls are then 503 `unavailable` and uncharged, counted in
 * shelf_store_write_refusals_total, and answered again once the lock is let go.
 */
import assert from "node:assert/strict";
import { DatabaseSync } from "node:sqlite";
import { spawnShelf } from "./proof/shelf_process.ts";
import { createAccount, usedCredits } from "./proof/admin_client.ts";
import { FakeMarketplace } from "./fake_marketplace.ts";
import { tempKv } from "./proof/http.ts";
import { removeKvFiles } from "../core/kv_files.ts";

Deno.test("a KV file whose write lock another process holds: paid calls 503 uncharged, counted, and served once it is let go", async () => {
  await using fake = new FakeMarketplace();
  fake.page("https://www.amazon.com/dp/B07H57DNVV", "product/amazon.com__app-B07H57DNVV.html");
  const kvPath = await tempKv();
  const token = crypto.randomUUID();
  try {
    await using shelf = await spawnShelf({
      KV_PATH: kvPath,
      UPSTREAM: fake.upstream,
      ADMIN_TOKEN: token,
      RESULT_CACHE: "off",
    });
    const { key } = await createAccount(shelf.url, token, "growth");
    const call = () =>
      fetch(`${shelf.url}/v1/products/details?asin=B07H57DNVV`, { headers: { "x-api-key": key } });
    const refusals = async () => {
      const r = await fetch(`${shelf.url}/metrics`, {
        headers: { authorization: `Bearer ${token}` },
      });
      return Number(/^shelf_store_write_refusals_total (\d+)/m.exec(await r.text())?.[1]);
    };
    const first = await call();
    assert.equal(first.status, 200);
    await first.body?.cancel();
    assert.equal(await refusals(), 0);

    const holder = new DatabaseSync(kvPath);
    holder.exec("PRAGMA busy_timeout = 10000"); // until Shelf's own writes of the first call end
    holder.exec("BEGIN IMMEDIATE");
    try {
      const refused = await call();
      const body = await refused.json();
      assert.equal(refused.status, 503, JSON.stringify(body));
      assert.equal(body.error.code, "unavailable");
      assert.equal(refused.headers.get("retry-after"), "1");
      assert.equal(await refusals(), 1);
    } finally {
      holder.exec("ROLLBACK");
      holder.close();
    }
    const again = await call();
    assert.equal(again.status, 200);
    await again.body?.cancel();
    assert.equal(await usedCredits(shelf.url, key), 2, "the refused call was not charged");
  } finally {
    await removeKvFiles(kvPath);
  }
});
