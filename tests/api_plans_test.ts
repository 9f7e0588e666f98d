import assert from "node:assert/strict";
import { startServer } from "./test_server.ts";

Deno.test("an inactive subscription gets 403 forbidden on every call, until reactivated", async () => {
  await using s = await startServer();
  const { id, key } = await s.account("starter");
  await s.accounts.update(id, { status: "inactive" });
  for (const path of ["/v1/products/offers?asin=B07H57DNVV", "/v1/usage"]) {
    const r = await s.get(path, key);
    assert.equal(r.status, 403, path);
    assert.equal((await r.json()).error.code, "forbidden");
  }
  await s.accounts.update(id, { status: "active" });
  const r = await s.get("/v1/products/offers?asin=B07H57DNVV", key);
  assert.equal(r.status, 200);
  await r.body?.cancel();
});

Deno.test("the free plan lacks the scrape group: /v1/scrape is 403 and costs nothing", async () => {
  await using s = await startServer();
  const { key } = await s.account("free");
  const r = await s.get("/v1/scrape?url=https://www.amazon.com/dp/B07H57DNVV", key);
  assert.equal(r.status, 403);
  assert.equal((await r.json()).error.code, "forbidden");
  assert.equal((await (await s.get("/v1/usage", key)).json()).requests_used, 0);
});

Deno.test("/v1/scrape costs 2 credits on a plan that has it", async () => {
  await using s = await startServer();
  const { key } = await s.account("starter");
  const r = await s.get("/v1/scrape?url=https://www.amazon.com/dp/B07H57DNVV", key);
  assert.equal(r.status, 200);
  assert.equal(r.headers.get("x-credits-cost"), "2");
  await r.body?.cancel();
  assert.equal((await (await s.get("/v1/usage", key)).json()).requests_used, 2);
});

Deno.test("a PLANS_FILE catalog replaces the built-in one", async () => {
  const { parsePlans } = await import("../metering/plans.ts");
  const plans = parsePlans(JSON.stringify({
    plans: [{ id: "tiny", credits: 2, rate_limit_per_sec: 9, max_keys: 2, groups: ["utility"] }],
  }));
  assert.equal(plans.get("free"), undefined);
  assert.equal(plans.get("tiny")?.credits, 2);
  assert.throws(() => parsePlans('{"plans":[{"id":"x"}]}'), TypeError);
});

Deno.test("an account whose plan the catalog no longer lists keeps its keys through a status change (probe CP)", async () => {
  const { parsePlans } = await import("../metering/plans.ts");
  const { Accounts } = await import("../metering/accounts.ts");
  const { systemClock } = await import("../metering/clock.ts");
  const plan = (id: string) => ({ id, credits: 9, rate_limit_per_sec: 9, max_keys: 2, groups: [] });
  const kvPath = await Deno.makeTempFile({ suffix: ".kv" });
  const kv = await Deno.openKv(kvPath);
  try {
    const before = new Accounts(
      kv,
      parsePlans(JSON.stringify({ plans: [plan("old")] })),
      systemClock,
    );
    const a = await before.create("kept@example.com", "old");
    await before.createKey(a.id);
    // A PLANS_FILE that no longer lists "old", as the next start reads it.
    const after = new Accounts(
      kv,
      parsePlans(JSON.stringify({ plans: [plan("new")] })),
      systemClock,
    );
    for (const status of ["inactive", "active"]) {
      assert.deepEqual((await after.update(a.id, { status })).revoked, [], status);
    }
    const keys = await after.listKeys(a.id);
    assert.deepEqual(keys.map((k) => k.status), ["active"]);
    // A key for it says the plan is missing from this catalog, not that it allows 0 keys (probe
    // DG: the admin CLI run without the server's PLANS_FILE).
    await assert.rejects(
      after.createKey(a.id),
      (e: Error & { code?: string }) =>
        e.code === "unknown_plan" &&
        /plan old is not in this catalog \(plans: new\); run with the server's PLANS_FILE/.test(
          e.message,
        ),
    );
    // A plan change still trims to the new plan's limit, and keeps both here.
    assert.deepEqual((await after.update(a.id, { plan: "new" })).revoked, []);
  } finally {
    kv.close();
    const { removeKvFiles } = await import("../core/kv_files.ts");
    await removeKvFiles(kvPath);
  }
});
