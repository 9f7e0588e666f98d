/**
 * Two processes on one KV file take turns with SQLite's write lock, and a commit that finds it
 * held throws ("database is locked"). Taken for a store that refuses writes after eight such
 * throws within a few milliseconds, that dropped the refunds of failed calls (customers paid for
 * calls whose answers said they were free) and answered healthy calls 503 (probe L). Here many
 * accounts' calls all fail upstream, spread over two processes: none may be charged.
 */
import assert from "node:assert/strict";
import { FakeMarketplace } from "./fake_marketplace.ts";
import { type ShelfProcess, spawnShelves } from "./proof/shelf_process.ts";
import { plansFile } from "./proof/plans_file.ts";
import { createAccount, usedCredits } from "./proof/admin_client.ts";
import { type Answer, hit, tally, tallyText, tempKv } from "./proof/http.ts";
import { removeKvFiles } from "../core/kv_files.ts";

const ACCOUNTS = 60;
const SECONDS = 10;
const CONNECTIONS = 96;

Deno.test("failed calls of many accounts over two processes on one KV file are all refunded, and none is a 503", async () => {
  await using fake = new FakeMarketplace(); // every ASIN below is unknown to it: a 404 page
  const kvPath = await tempKv();
  const plans = await plansFile(1_000_000, 1_000_000);
  const token = crypto.randomUUID();
  const servers: ShelfProcess[] = [];
  try {
    await spawnShelves(2, {
      KV_PATH: kvPath,
      UPSTREAM: fake.upstream,
      PLANS_FILE: plans,
      ADMIN_TOKEN: token,
      RESULT_CACHE: "off",
    }, servers);
    const keys: string[] = [];
    for (let i = 0; i < ACCOUNTS; i++) keys.push((await createAccount(servers[0].url, token)).key);
    const answers: Answer[] = [];
    const end = performance.now() + SECONDS * 1000;
    let n = 0;
    await Promise.all(Array.from({ length: CONNECTIONS }, async () => {
      while (performance.now() < end) {
        const i = n++;
        const asin = `B0Q${String(i).padStart(7, "0")}`;
        answers.push(
          await hit(servers[i % 2].url, `/v1/products/details?asin=${asin}`, keys[i % ACCOUNTS]),
        );
      }
    }));
    const counts = tally(answers);
    let used = 0;
    for (const key of keys) used += await usedCredits(servers[0].url, key);
    console.log({ calls: answers.length, answers: tallyText(counts), used });
    assert.equal(counts.get("200") ?? 0, 0, "no call succeeds");
    const errors = servers.flatMap((s) => s.logs().split("\n").filter((l) => /error/i.test(l)));
    assert.equal(
      counts.get("503 unavailable") ?? 0,
      0,
      `no 503: ${tallyText(counts)}\n${errors.slice(0, 20).join("\n")}`,
    );
    assert.equal(used, 0, `credits charged for failed calls: ${tallyText(counts)}`);
  } finally {
    for (const s of servers) await s[Symbol.asyncDispose]();
    await removeKvFiles(kvPath);
    await Deno.remove(plans).catch(() => {});
  }
});
