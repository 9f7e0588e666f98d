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

Deno.test("a plan change re-arms the 80% alert: crossing 80% of the new allowance writes a new one", async () => {
  const { BUILTIN_PLANS, Plans } = await import("../metering/plans.ts");
  const { listAlerts } = await import("../metering/alerts.ts");
  const plan = (id: string, credits: number) => ({
    id,
    credits,
    rate_limit_per_sec: 1000,
    max_keys: 5,
    groups: ["products"],
  });
  const token = "admin-secret-token";
  await using s = await startServer({
    adminToken: token,
    plans: new Plans([...BUILTIN_PLANS, plan("ten", 10), plan("twenty", 20)]),
  });
  const { id, key } = await s.account("ten");
  const calls = async (n: number) => {
    for (let i = 0; i < n; i++) {
      const r = await s.get("/v1/products/offers?asin=B07H57DNVV", key);
      assert.equal(r.status, 200);
      await r.body?.cancel();
    }
  };
  const eighty = async () =>
    (await listAlerts(s.kv, id)).filter((a) => a.threshold === 80).map((a) => [a.plan, a.used]);
  await calls(8); // 80% of 10
  assert.deepEqual(await eighty(), [["ten", 8]]);
  const r = await fetch(`${s.url}/admin/accounts/${id}`, {
    method: "PATCH",
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
    body: JSON.stringify({ plan: "twenty" }),
  });
  assert.equal(r.status, 200);
  await r.body?.cancel();
  await calls(7); // 15 of 20: under 80%
  assert.deepEqual(await eighty(), [["ten", 8]]);
  await calls(1); // 16 of 20: 80% of the new allowance
  assert.deepEqual((await eighty()).sort(), [["ten", 8], ["twenty", 16]]);
});
