/**
 * Proof 1, exact quota under concurrency: 1,000 concurrent data calls on one account with 50
 * credits give exactly 50 × 200 and usage 50, on one server process and on two processes
 * sharing one KV file (the meter's versionstamp check is then the only thing between them).
 */
import assert from "node:assert/strict";
import { FakeMarketplace } from "./fake_marketplace.ts";
import { type ShelfProcess, spawnShelves } from "./proof/shelf_process.ts";
import { plansFile } from "./proof/plans_file.ts";
import { createAccount, usedCredits } from "./proof/admin_client.ts";
import { type Answer, hit, json, tally, tallyText, tempKv } from "./proof/http.ts";
import { removeKvFiles } from "../core/kv_files.ts";
import { errorShapeProblem } from "./proof/error_shape.ts";
import { scanForSecrets } from "./proof/secrets.ts";
import { report } from "./proof/figures.ts";

const CALLS = 1_000;
const CREDITS = 50;
const DETAILS = "/v1/products/details?asin=B07H57DNVV";

async function quotaRun(processes: number) {
  await using fake = new FakeMarketplace();
  fake.page("https://www.amazon.com/dp/B07H57DNVV", "product/amazon.com__app-B07H57DNVV.html");
  const kvPath = await tempKv();
  const plans = await plansFile(CREDITS, 1_000_000);
  const token = crypto.randomUUID();
  const servers: ShelfProcess[] = [];
  try {
    await spawnShelves(processes, {
      KV_PATH: kvPath,
      UPSTREAM: fake.upstream,
      PLANS_FILE: plans,
      ADMIN_TOKEN: token,
    }, servers);
    const { key } = await createAccount(servers[0].url, token);
    const started = performance.now();
    const answers: Answer[] = await Promise.all(
      Array.from({ length: CALLS }, (_, i) => hit(servers[i % processes].url, DETAILS, key)),
    );
    const ms = Math.round(performance.now() - started);
    const ok = answers.filter((a) => a.status === 200).length;
    const usages = await Promise.all(servers.map((s) => usedCredits(s.url, key)));
    const counts = tally(answers);
    const shapes = answers.filter((a) =>
      a.status !== 200 && errorShapeProblem(a.status, json(a)) !== null
    );
    const scan = await scanForSecrets({
      keys: [key],
      kvPaths: [kvPath],
      logs: servers.map((s) => s.logs()),
      bodies: answers.filter((a) => a.status !== 200).map((a) => a.text),
    });
    const figures = {
      processes,
      calls: CALLS,
      credits: CREDITS,
      "200s": ok,
      usage: usages.join("/"),
      answers: tallyText(counts),
      ms,
    };
    console.log(figures);
    assert.equal(ok, CREDITS, `exactly ${CREDITS} calls must succeed: ${tallyText(counts)}`);
    for (const u of usages) {
      assert.equal(u, CREDITS, "usage must equal the credits, seen from every process");
    }
    assert.equal(
      counts.get("429 quota_exhausted"),
      CALLS - CREDITS,
      `the rest must be quota_exhausted: ${tallyText(counts)}`,
    );
    assert.equal(shapes.length, 0, `error bodies off the spec's shape: ${shapes[0]?.text}`);
    assert.deepEqual(scan.hits, [], "a key value leaked");
    report(`1. quota, ${processes} process${processes > 1 ? "es" : ""}`, figures);
  } finally {
    for (const s of servers) await s[Symbol.asyncDispose]();
    await removeKvFiles(kvPath);
    await Deno.remove(plans).catch(() => {});
  }
}

Deno.test("proof: 1,000 concurrent calls on 50 credits give exactly 50 × 200 on one process", async () => {
  await quotaRun(1);
});

Deno.test("proof: 1,000 concurrent calls on 50 credits give exactly 50 × 200 on two processes sharing one KV file", async () => {
  await quotaRun(2);
});
