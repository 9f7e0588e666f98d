/**
 * Proof 4, crash: SIGKILL of a server process under load, then a restart on the same KV file.
 * Every 200 the client received was charged (usage ≥ 200s), and the only calls charged without
 * a 200 are calls that were in flight at the kill (usage − 200s ≤ in flight, counted as the calls
 * whose connection died with the process). The store opens
 * cleanly: the restarted server serves and charges, and every entry of the file can be listed.
 */
import assert from "node:assert/strict";
import { FakeMarketplace } from "./fake_marketplace.ts";
import { type ShelfProcess, spawnShelf } from "./proof/shelf_process.ts";
import { plansFile } from "./proof/plans_file.ts";
import { createAccount, usedCredits } from "./proof/admin_client.ts";
import { type Answer, hit, tally, tallyText, tempKv } from "./proof/http.ts";
import { removeKvFiles } from "../core/kv_files.ts";
import { kvText, scanForSecrets } from "./proof/secrets.ts";
import { report } from "./proof/figures.ts";

const CONNECTIONS = 20;
const PAGES = 5_000;
const FIXTURE = "product/amazon.com__app-B07H57DNVV.html";
const asin = (n: number) => `B0CRS${String(n % PAGES).padStart(5, "0")}`;

Deno.test("proof: kill -9 under load loses no charge of a 200 and charges at most the calls in flight", async () => {
  await using fake = new FakeMarketplace();
  for (let i = 0; i < PAGES; i++) fake.page(`https://www.amazon.com/dp/${asin(i)}`, FIXTURE);
  fake.delayMs = 20; // calls spend time upstream, so that some are in flight at the kill
  const kvPath = await tempKv();
  const plans = await plansFile(1_000_000, 100_000);
  const token = crypto.randomUUID();
  const env = { KV_PATH: kvPath, UPSTREAM: fake.upstream, PLANS_FILE: plans, ADMIN_TOKEN: token };
  let restarted: ShelfProcess | undefined;
  try {
    const first = await spawnShelf(env);
    const { key } = await createAccount(first.url, token);
    const answers: Answer[] = [];
    let inFlight = 0;
    let killedInFlight = -1;
    let failed = 0;
    let n = 0;
    let killed = false;
    const loop = async () => {
      while (!killed && n < 100_000) {
        const path = `/v1/products/details?asin=${asin(n++)}`;
        inFlight++;
        try {
          answers.push(await hit(first.url, path, key));
        } catch {
          failed++; // the connection died with the process: this call was in flight at the kill
        } finally {
          inFlight--;
        }
      }
    };
    const load = Promise.all(Array.from({ length: CONNECTIONS }, loop));
    // Under load from the start: once answers come (a busy machine may take seconds to start the
    // page workers), then a moment more.
    for (let waited = 0; answers.length === 0 && waited < 30_000; waited += 10) {
      await new Promise((r) => setTimeout(r, 10));
    }
    await new Promise((r) => setTimeout(r, 500 + Math.random() * 1_000));
    killed = true;
    killedInFlight = inFlight;
    await first.crash();
    await load;

    restarted = await spawnShelf(env);
    const ok = answers.filter((a) => a.status === 200).length;
    const used = await usedCredits(restarted.url, key);
    const after = await hit(restarted.url, `/v1/products/details?asin=${asin(PAGES - 1)}`, key);
    const usedAfter = await usedCredits(restarted.url, key);
    const { entries } = await kvText(kvPath);
    const scan = await scanForSecrets({
      keys: [key],
      kvPaths: [kvPath],
      logs: [first.logs(), restarted.logs()],
      bodies: answers.filter((a) => a.status !== 200).map((a) => a.text),
    });
    const figures = {
      "calls answered": answers.length,
      "200s": ok,
      "open when kill issued": killedInFlight,
      "in flight at kill (connection lost)": failed,
      "usage after restart": used,
      "charged without a 200": used - ok,
      "KV entries after restart": entries,
    };
    console.log(figures, tallyText(tally(answers)));
    assert.equal(
      ok,
      answers.length,
      `every answered call must be a 200: ${tallyText(tally(answers))}`,
    );
    // A call still open when the kill was issued may complete before the signal lands, so the
    // calls in flight at the kill itself are those that lost their connection.
    assert.ok(failed <= killedInFlight, "only calls open at the kill can lose their connection");
    assert.ok(ok > 0 && failed > 0, "the kill must happen under load");
    assert.ok(used >= ok, `usage ${used} below the ${ok} 200s received`);
    assert.ok(
      used - ok <= failed,
      `${used - ok} charged without a 200, more than the ${failed} in flight at the kill`,
    );
    assert.equal(after.status, 200, "the restarted server serves on the same store");
    assert.equal(usedAfter, used + 1, "and charges on it");
    assert.deepEqual(scan.hits, [], "a key value leaked");
    report("4. crash (kill -9 under load)", figures);
  } finally {
    await restarted?.[Symbol.asyncDispose]();
    await removeKvFiles(kvPath);
    await Deno.remove(plans).catch(() => {});
  }
});
