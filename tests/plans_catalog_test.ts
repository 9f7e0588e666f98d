/**
 * The plan catalog's bounds and the built-in table (probe HN, PL1, PL3, PL6): a PLANS_FILE plan id
 * is 1-32 of [a-z0-9_-], a catalog lists at least one plan (even with SIGNUP=closed), and the
 * built-in catalog is exactly INTERFACE.md's plan table.
 */
import assert from "node:assert/strict";
import { loadConfig } from "../config.ts";
import { BUILTIN_PLANS } from "../metering/plans.ts";
import { startServer } from "./test_server.ts";

const env = (vars: Record<string, string>) => ({ get: (k: string) => vars[k] });
const plan = (id: string) => ({
  id,
  credits: 10,
  rate_limit_per_sec: 1,
  max_keys: 1,
  groups: ["products"],
});

Deno.test("PLANS_FILE: a plan id of 32 characters is taken, one of 33 is refused", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const id32 = "p".repeat(32);
    await Deno.writeTextFile(`${dir}/ok.json`, JSON.stringify({ plans: [plan(id32)] }));
    const ok = loadConfig(env({ PLANS_FILE: `${dir}/ok.json`, SIGNUP: "closed" }));
    assert.deepEqual(ok.plans.ids(), [id32]);
    await Deno.writeTextFile(`${dir}/long.json`, JSON.stringify({ plans: [plan(id32 + "p")] }));
    assert.throws(
      () => loadConfig(env({ PLANS_FILE: `${dir}/long.json`, SIGNUP: "closed" })),
      (e: Error) =>
        /^Cannot start as 'PLANS_FILE' is not a plan catalog/.test(e.message) &&
        /plans\.0\.id: /.test(e.message),
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("PLANS_FILE: a catalog with no plans is refused, even with SIGNUP=closed", async () => {
  const dir = await Deno.makeTempDir();
  try {
    await Deno.writeTextFile(`${dir}/empty.json`, JSON.stringify({ plans: [] }));
    assert.throws(
      () => loadConfig(env({ PLANS_FILE: `${dir}/empty.json`, SIGNUP: "closed" })),
      (e: Error) =>
        /^Cannot start as 'PLANS_FILE' is not a plan catalog/.test(e.message) &&
        /plans: /.test(e.message),
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("the built-in catalog is INTERFACE.md's plan table: credits, rate, keys and groups", () => {
  const but = ["products", "reviews", "sellers", "merchandising", "utility"];
  const all = [...but, "scrape"];
  const table = BUILTIN_PLANS.map((p) => [
    p.id,
    p.credits,
    p.rate_limit_per_sec,
    p.max_keys,
    [...p.groups].sort(),
  ]);
  assert.deepEqual(table, [
    ["free", 50, 1, 1, [...but].sort()],
    ["starter", 5_000, 5, 3, [...all].sort()],
    ["growth", 50_000, 20, 10, [...all].sort()],
    ["scale", 500_000, 100, 50, [...all].sort()],
  ]);
  const env0 = loadConfig(env({}));
  assert.deepEqual(env0.plans.get("growth")?.max_keys, 10, "no PLANS_FILE: the built-in one");
});

Deno.test("a growth account holds 10 active keys; the 11th is refused at the plan's key limit", async () => {
  const TOKEN = "plans-catalog-test-token-0123456789";
  await using s = await startServer({ adminToken: TOKEN });
  const admin = async (method: string, path: string, body?: unknown) => {
    const r = await fetch(s.url + path, {
      method,
      headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: r.status, body: await r.json() };
  };
  const acct = await admin("POST", "/admin/accounts", { email: "g@example.com", plan: "growth" });
  assert.equal(acct.status, 201);
  for (let i = 1; i <= 10; i++) {
    const k = await admin("POST", `/admin/accounts/${acct.body.id}/keys`, { name: `k${i}` });
    assert.equal(k.status, 201, `key ${i}: ${JSON.stringify(k.body)}`);
  }
  const eleventh = await admin("POST", `/admin/accounts/${acct.body.id}/keys`, { name: "k11" });
  assert.equal(eleventh.status, 409);
  assert.match(JSON.stringify(eleventh.body), /10 active keys/);
});
