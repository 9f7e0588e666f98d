/**
 * Watch creations and deletions beside another program holding the store's write lock (another
 * instance on the same KV file): a checked commit that meets the lock throws at once ("database
 * is locked") instead of failing its check. It is tried again after the back-off every commit uses
 * (core/lock_backoff.ts), so the call goes through once the lock is let go; thrown straight out,
 * a deletion answered an unexplained 503 (test writer T24).
 */
import assert from "node:assert/strict";
import { DatabaseSync } from "node:sqlite";
import { createWatch, deleteWatch, newWatch } from "../watches/store.ts";
import { KV } from "../metering/kv_layout.ts";
import { removeKvFiles } from "../core/kv_files.ts";
import { storeRefusal } from "../routes/store_refusal.ts";
import { Metrics } from "../core/metrics.ts";

const watchOf = (account: string) =>
  newWatch({
    account_id: account,
    key_id: "key_1",
    asin: "B07H57DNVV",
    marketplace: "US",
    zip: null,
    every_seconds: 3600,
    webhook_url: "https://hooks.example.com/shelf",
    on: ["price"],
  }, Date.now());

/** Runs `work` while another connection holds the store's write lock for `ms`. */
async function whileHeld<T>(path: string, ms: number, work: () => Promise<T>): Promise<T> {
  const other = new DatabaseSync(path);
  other.exec("BEGIN IMMEDIATE");
  const release = new Promise<void>((r) =>
    setTimeout(() => {
      other.exec("COMMIT");
      other.close();
      r();
    }, ms)
  );
  try {
    return await work();
  } finally {
    await release;
  }
}

Deno.test("createWatch and deleteWatch wait out another program's write lock and then go through", async () => {
  const path = await Deno.makeTempFile({ suffix: ".kv" });
  const kv = await Deno.openKv(path);
  try {
    const kept = watchOf("acc_kept");
    assert.equal(await createWatch(kv, kept, 5), true);
    const added = watchOf("acc_added");
    const [created, deleted] = await whileHeld(
      path,
      300,
      () => Promise.all([createWatch(kv, added, 5), deleteWatch(kv, "acc_kept", kept.id)]),
    );
    assert.equal(created, true);
    assert.equal(deleted, true);
    assert.equal((await kv.get(KV.watch(added.id))).versionstamp !== null, true);
    assert.equal((await kv.get(KV.watch(kept.id))).value, null);
    assert.equal((await kv.get<number>(KV.watchCount("acc_added"))).value, 1);
    assert.equal((await kv.get<number>(KV.watchCount("acc_kept"))).value, 0);
  } finally {
    kv.close();
    await removeKvFiles(path);
  }
});

Deno.test("a commit that met another process's lock and was not tried again is a 503 unavailable with Retry-After, counted", async () => {
  const metrics = new Metrics();
  const logged: string[] = [];
  const refused = storeRefusal(new TypeError("database is locked"), {
    log: { error: (m: string) => logged.push(m) } as never,
    metrics,
  });
  assert.equal(refused?.status, 503);
  assert.equal(refused?.code, "unavailable");
  assert.equal(refused?.headers?.["Retry-After"], "1");
  assert.deepEqual(logged, ["store write failed"]);
  const counted = (await metrics.storeWriteRefusals.get()).values.reduce((n, v) => n + v.value, 0);
  assert.equal(counted, 1);
  assert.equal(
    storeRefusal(new TypeError("something else"), { log: { error: () => {} } as never, metrics }),
    null,
  );
});
