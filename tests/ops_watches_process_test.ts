/**
 * Watches as operators run them: `main.ts` in a child process with WATCH_MIN_SECONDS and
 * WEBHOOK_ALLOW_PRIVATE from the environment, its own loops (default 5 s poll), a fake
 * marketplace changing a price (with the result cache on, which refreshes must look behind), a
 * loopback receiver checking the signature, and a drain that ends the process cleanly. Without WEBHOOK_ALLOW_PRIVATE the same loopback target is refused.
 */
import assert from "node:assert/strict";
import { spawnShelf } from "./proof/shelf_process.ts";
import { createAccount } from "./proof/admin_client.ts";
import { FakeMarketplace } from "./fake_marketplace.ts";
import { fixture } from "./fixture.ts";
import { postWatch, receiver, verify } from "./webhook_receiver.ts";
import { loadConfig } from "../config.ts";
import { removeKvFiles } from "../core/kv_files.ts";

const PAGE = "product/amazon.com__app-B07H57DNVV.html";
const DP = "https://www.amazon.com/dp/B07H57DNVV";
const TOKEN = `watch-${crypto.randomUUID()}`;

Deno.test("watches in a spawned main.ts: settings from the environment, a signed event, a clean drain", async () => {
  await using fake = new FakeMarketplace();
  await using hook = receiver();
  const page = await fixture(PAGE);
  fake.page(DP, PAGE);
  const kvPath = await Deno.makeTempFile({ suffix: ".kv" });
  const shelf = await spawnShelf({
    KV_PATH: kvPath,
    UPSTREAM: fake.upstream,
    ADMIN_TOKEN: TOKEN,
    // The result cache stays on: a refresh must look behind it, or the new price never shows.
    WATCH_MIN_SECONDS: "1",
    WEBHOOK_ALLOW_PRIVATE: "1",
  });
  try {
    const { key } = await createAccount(shelf.url, TOKEN, "growth");
    const r = await postWatch(shelf.url, key, hook.url);
    assert.equal(r.status, 201);
    const { secret } = await r.json();
    const stop = Date.now() + 15_000;
    while (fake.pageRequests("/dp/B07H57DNVV") < 1 && Date.now() < stop) {
      await new Promise((r) => setTimeout(r, 50));
    }
    assert.equal(fake.pageRequests("/dp/B07H57DNVV"), 1, "the first refresh runs at once");
    fake.page(DP, { html: page.replaceAll("$11.88", "$12.34") });
    while (!hook.got.length && Date.now() < stop) await new Promise((r) => setTimeout(r, 50));
    assert.equal(hook.got.length, 1, "no event within 15 s");
    assert.ok(await verify(secret, hook.got[0].signature, hook.got[0].body));
    assert.equal(JSON.parse(hook.got[0].body).after.price.amount, 12.34);
  } finally {
    assert.equal(await shelf.stop("SIGTERM"), 0);
    assert.doesNotMatch(shelf.logs(), /whsec_/, "a watch secret reached the log");
  }

  // The same store and target, without WEBHOOK_ALLOW_PRIVATE: loopback is refused.
  const strict = await spawnShelf({ KV_PATH: kvPath, UPSTREAM: fake.upstream, ADMIN_TOKEN: TOKEN });
  try {
    const { key } = await createAccount(strict.url, TOKEN, "growth");
    const r = await postWatch(strict.url, key, hook.url, 3600);
    assert.equal(r.status, 422);
    assert.deepEqual((await r.json()).detail[0].loc, ["body", "webhook_url"]);
    const slow = await fetch(`${strict.url}/v1/watches`, {
      method: "POST",
      headers: { "x-api-key": key, "content-type": "application/json" },
      body: JSON.stringify({
        asin: "B07H57DNVV",
        every_seconds: 60, // below the default WATCH_MIN_SECONDS of 3600
        webhook_url: "https://hooks.example.com/x",
        on: ["price"],
      }),
    });
    assert.equal(slow.status, 422);
    assert.deepEqual((await slow.json()).detail[0].loc, ["body", "every_seconds"]);
  } finally {
    await strict.stop("SIGTERM");
    await removeKvFiles(kvPath);
  }
});

Deno.test("watch settings: values that cannot be used end start-up naming the setting", () => {
  const env = (vars: Record<string, string>) => ({ get: (k: string) => vars[k] });
  assert.equal(loadConfig(env({})).watchMinSeconds, 3600);
  assert.equal(loadConfig(env({})).webhookAllowPrivate, false);
  assert.equal(loadConfig(env({ WATCH_MIN_SECONDS: "30" })).watchMinSeconds, 30);
  assert.equal(loadConfig(env({ WEBHOOK_ALLOW_PRIVATE: "1" })).webhookAllowPrivate, true);
  for (const v of ["0", "-5", "1.5", "abc", "2592001"]) {
    assert.throws(() => loadConfig(env({ WATCH_MIN_SECONDS: v })), /'WATCH_MIN_SECONDS'/, v);
  }
  for (const v of ["yes", "true", "2"]) {
    assert.throws(
      () => loadConfig(env({ WEBHOOK_ALLOW_PRIVATE: v })),
      /'WEBHOOK_ALLOW_PRIVATE'/,
      v,
    );
  }
});
