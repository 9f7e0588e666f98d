/**
 * The account store stays consistent across what a single test server never shows: the indexes
 * and audit entries key churn leaves behind, records an earlier version wrote, commits whose
 * outcome is unknown (a thrown commit, a lost reply), and another process writing the same file.
 */
import assert from "node:assert/strict";
import { ManualClock, startServer, type TestServer } from "./test_server.ts";
import { adminApi } from "./admin_calls.ts";
import { Accounts, KEPT_REVOKED_KEYS } from "../metering/accounts.ts";
import { Meter } from "../metering/meter.ts";
import { builtinPlans } from "../metering/plans.ts";
import { systemClock } from "../metering/clock.ts";
import { KV } from "../metering/kv_layout.ts";
import type { AccountState, KeyState } from "../metering/account_state.ts";
import { hashKey } from "../metering/api_key.ts";
import { removeKvFiles } from "../core/kv_files.ts";
import { OFFERS } from "./bulk_plan.ts";
import { withCommits } from "./counted_kv.ts";
import { editRecord } from "./meter_store.ts";

const TOKEN = "store-consistency-token-0123456789";
const admin = adminApi(TOKEN);

async function entries(kv: Deno.Kv, prefix: Deno.KvKey): Promise<number> {
  return (await Array.fromAsync(kv.list({ prefix }))).length;
}

async function status(s: TestServer, path: string, key: string): Promise<number> {
  const r = await s.get(path, key);
  await r.body?.cancel();
  return r.status;
}

Deno.test("key churn: a forgotten revoked key leaves neither its id entry nor its digest entry behind", async () => {
  const clock = new ManualClock(Date.UTC(2026, 3, 1, 12, 0, 0));
  await using s = await startServer({ clock, adminToken: TOKEN });
  const id =
    (await admin(s, "POST", "/admin/accounts", { email: "churn-index@example.com" })).body.id;
  const made: { id: string; key: string }[] = [];
  for (let i = 0; i < KEPT_REVOKED_KEYS + 2; i++) {
    clock.advance(1000); // distinct revocation times: the two oldest are forgotten
    const k = await admin(s, "POST", `/admin/accounts/${id}/keys`, {});
    assert.equal(k.status, 201, `cycle ${i}: ${JSON.stringify(k.body)}`);
    assert.equal((await admin(s, "DELETE", `/admin/keys/${k.body.id}`)).status, 200);
    made.push(k.body);
  }
  // Only the kept audit trail is indexed: the store does not grow with every key ever made.
  assert.equal(await entries(s.kv, KV.revokedKeys(id)), KEPT_REVOKED_KEYS);
  assert.equal(await entries(s.kv, KV.keyById("").slice(0, 1)), KEPT_REVOKED_KEYS);
  assert.equal(await entries(s.kv, KV.keyByHash("").slice(0, 1)), KEPT_REVOKED_KEYS);
  for (const gone of made.slice(0, 2)) {
    assert.equal((await s.kv.get(KV.keyById(gone.id))).value, null);
    assert.equal((await s.kv.get(KV.keyByHash(hashKey(gone.key)))).value, null);
    // Unknown now, to this process and to one that never saw it.
    assert.equal(await status(s, OFFERS, gone.key), 401);
    assert.equal(await new Accounts(s.kv, builtinPlans(), clock).lookupKey(gone.key), null);
  }
  const kept = made[2];
  assert.ok((await s.kv.get(KV.keyById(kept.id))).value, "a kept revoked key stays indexed");
  assert.ok((await s.kv.get(KV.keyByHash(hashKey(kept.key)))).value);
});

Deno.test("a record written by an earlier version: revoking a key moves its other revoked keys out too, keeping their revocation time", async () => {
  await using s = await startServer({ adminToken: TOKEN });
  const id =
    (await admin(s, "POST", "/admin/accounts", { email: "legacy@example.com", plan: "starter" }))
      .body.id;
  const old = (await admin(s, "POST", `/admin/accounts/${id}/keys`, { name: "old" })).body;
  const cur = (await admin(s, "POST", `/admin/accounts/${id}/keys`, { name: "cur" })).body;
  // Earlier versions left revoked keys in the record; the record must come to hold active keys
  // only, or it grows towards KV's value limit with every key ever revoked.
  const revokedAt = Date.UTC(2025, 11, 24, 18, 30, 0);
  await editRecord(s.kv, id, (legacy) => {
    legacy.keys[old.id] = { ...legacy.keys[old.id], status: "revoked", revoked_at: revokedAt };
  });

  assert.equal((await admin(s, "DELETE", `/admin/keys/${cur.id}`)).status, 200);
  const record = (await s.kv.get<AccountState>(KV.account(id))).value!;
  assert.deepEqual(Object.keys(record.keys), []);
  const audit = (await s.kv.get<KeyState>(KV.revokedKey(id, old.id))).value;
  assert.equal(audit?.status, "revoked");
  assert.equal(audit?.revoked_at, revokedAt, "the original revocation time, not now");
  const listed = (await admin(s, "GET", `/admin/accounts/${id}/keys`)).body.keys as {
    id: string;
    status: string;
    revoked_at: string;
  }[];
  assert.deepEqual(
    listed.map((k) => [k.id, k.status]).sort(),
    [[old.id, "revoked"], [cur.id, "revoked"]].sort(),
  );
  assert.equal(listed.find((k) => k.id === old.id)!.revoked_at, new Date(revokedAt).toISOString());
});

Deno.test("two instances on one store: a key created through one's admin API works on the other at once", async () => {
  const kvPath = await Deno.makeTempFile({ suffix: ".kv" });
  try {
    await using a = await startServer({ kvPath, adminToken: TOKEN });
    await using b = await startServer({ kvPath, adminToken: TOKEN });
    const id = (await admin(b, "POST", "/admin/accounts", {
      email: "two-inst@example.com",
      plan: "starter",
    }))
      .body.id;
    const first = (await admin(b, "POST", `/admin/accounts/${id}/keys`, { name: "first" })).body;
    // Instance A now holds the account's record from this call.
    assert.equal(await status(a, OFFERS, first.key), 200);
    const second = (await admin(b, "POST", `/admin/accounts/${id}/keys`, { name: "second" })).body;
    // A's copy predates the key: its refusal is checked against the store before it is answered.
    assert.equal(await status(a, OFFERS, second.key), 200);
    assert.equal(await status(a, "/v1/usage", second.key), 200);
    const shown = await admin(b, "GET", `/admin/accounts/${id}`);
    assert.equal(shown.body.usage.requests_used, 2);
  } finally {
    await removeKvFiles(kvPath);
  }
});

Deno.test("lost replies: a sign-up whose commit threw, for an address another account holds, is refused as email_taken", async () => {
  const path = await Deno.makeTempFile({ suffix: ".kv" });
  const kv1 = await Deno.openKv(path);
  const kv2 = await Deno.openKv(path);
  try {
    const plans = builtinPlans();
    const holder = await new Accounts(kv1, plans, systemClock).create("taken@example.com");
    // Another process on the same file: its first commit throws without landing.
    let thrown = 0;
    const locked = withCommits(kv2, (commit) => {
      if (thrown++ === 0) return Promise.reject(new Error("database is locked"));
      return commit();
    });
    const accounts = new Accounts(locked, plans, systemClock);
    await assert.rejects(() => accounts.create("taken@example.com", "starter"), {
      name: "AccountError",
      status: 409,
      code: "email_taken",
    });
    assert.equal(await accounts.idByEmail("taken@example.com"), holder.id);
    const all = (await accounts.list()).accounts;
    assert.deepEqual(all.map((x) => [x.id, x.plan]), [[holder.id, "free"]]);
  } finally {
    kv1.close();
    kv2.close();
    await removeKvFiles(path);
  }
});

Deno.test("lost replies: a call whose reply was lost is known to have landed though another instance wrote the record since", async () => {
  const path = await Deno.makeTempFile({ suffix: ".kv" });
  const kv1 = await Deno.openKv(path);
  const kv2 = await Deno.openKv(path);
  try {
    const plans = builtinPlans();
    const accounts = new Accounts(kv1, plans, systemClock);
    const a = await accounts.create("lost-busy@example.com", "scale");
    const { key } = await accounts.createKey(a.id);
    const call = { group: "products" as const, cost: 1, valid: true };
    const other = new Meter(kv2, plans, systemClock);
    let lose = true;
    const losing = withCommits(kv1, async (commit) => {
      const r = await commit();
      if (r.ok && lose) {
        lose = false;
        // A busy account: other instances' calls land before this one reads the record again.
        for (let i = 0; i < 3; i++) {
          assert.equal((await other.call(a.id, key.id, call)).outcome, "admitted");
        }
        throw new Error("connection reset after the commit was applied");
      }
      return r;
    });
    const meter = new Meter(losing, plans, systemClock);
    assert.equal((await meter.call(a.id, key.id, call)).outcome, "admitted");
    assert.equal(lose, false, "the reply was lost");
    // Charged once: 1 + the other instance's 3, not 5.
    assert.equal((await accounts.get(a.id)).used, 4);
  } finally {
    kv1.close();
    kv2.close();
    await removeKvFiles(path);
  }
});
