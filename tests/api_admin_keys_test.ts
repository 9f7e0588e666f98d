/**
 * Key churn and plan downgrades through the admin API (issues 13.7, 13.13, 18.1): the account
 * record holds only active keys, so 500 create/revoke cycles leave it small and the account
 * working; a downgrade keeps the newest keys up to the new limit and says which it revoked; the
 * stored and shown prefix is exactly `shelf_live_`/`shelf_test_` plus four characters.
 */
import assert from "node:assert/strict";
import { adminApi } from "./admin_calls.ts";
import { startServer } from "./test_server.ts";
import { KV } from "../metering/kv_layout.ts";
import { KEPT_REVOKED_KEYS } from "../metering/accounts.ts";

const TOKEN = "admin-keys-test-token-0123456789";

const admin = adminApi(TOKEN);

async function recordBytes(kv: Deno.Kv, id: string): Promise<number> {
  const v = (await kv.get(KV.account(id))).value;
  return new TextEncoder().encode(JSON.stringify(v)).length;
}

Deno.test("500 key create/revoke cycles: the record stays small, the account keeps working, the newest revoked keys stay listed", async () => {
  await using s = await startServer({ adminToken: TOKEN });
  const id =
    (await admin(s, "POST", "/admin/accounts", { email: "churn@example.com", plan: "scale" })).body
      .id;
  let last = "";
  for (let i = 0; i < 500; i++) {
    const k = await admin(s, "POST", `/admin/accounts/${id}/keys`, { name: "n".repeat(200) });
    assert.equal(k.status, 201, `cycle ${i}: ${JSON.stringify(k.body)}`);
    if (i < 499) assert.equal((await admin(s, "DELETE", `/admin/keys/${k.body.id}`)).status, 200);
    last = k.body.key;
  }
  const bytes = await recordBytes(s.kv, id);
  assert.ok(bytes < 4_096, `the record holds one active key: ${bytes} bytes`);
  const call = await s.get("/v1/products/offers?asin=B07H57DNVV", last);
  assert.equal(call.status, 200);
  await call.body?.cancel();
  // The newest revoked keys stay listed, up to the documented number; older ones are forgotten.
  const listed = await admin(s, "GET", `/admin/accounts/${id}/keys`);
  assert.equal(listed.body.keys.length, 1 + KEPT_REVOKED_KEYS);
  assert.equal(
    listed.body.keys.filter((k: { status: string }) => k.status === "revoked").length,
    KEPT_REVOKED_KEYS,
  );
  const revoked = listed.body.keys.find((k: { status: string }) => k.status === "revoked");
  assert.ok(revoked.revoked_at, "a revoked key keeps its revocation time");
  const again = await admin(s, "DELETE", `/admin/keys/${revoked.id}`);
  assert.equal(again.status, 200, "revoking twice answers the revoked key");
  assert.equal(again.body.status, "revoked");
});

Deno.test("a full record of the largest plan stays under KV's value limit", async () => {
  await using s = await startServer({ adminToken: TOKEN });
  const id =
    (await admin(s, "POST", "/admin/accounts", { email: "full@example.com", plan: "scale" })).body
      .id;
  for (let i = 0; i < 50; i++) {
    assert.equal(
      (await admin(s, "POST", `/admin/accounts/${id}/keys`, { name: "x".repeat(500) })).status,
      201,
    );
  }
  assert.equal(
    (await admin(s, "POST", `/admin/accounts/${id}/keys`, {})).status,
    409,
    "the plan's limit",
  );
  const bytes = await recordBytes(s.kv, id);
  assert.ok(bytes < 32 * 1024, `${bytes} bytes`);
});

Deno.test("a downgrade keeps the newest keys up to the new limit and revokes the rest, said in the answer", async () => {
  await using s = await startServer({ adminToken: TOKEN });
  const id =
    (await admin(s, "POST", "/admin/accounts", { email: "down@example.com", plan: "growth" })).body
      .id;
  const keys: { id: string; key: string }[] = [];
  for (let i = 0; i < 5; i++) {
    keys.push((await admin(s, "POST", `/admin/accounts/${id}/keys`, { name: `k${i}` })).body);
    await new Promise((r) => setTimeout(r, 3)); // distinct creation times
  }
  const down = await admin(s, "PATCH", `/admin/accounts/${id}`, { plan: "starter" }); // 3 keys
  assert.equal(down.status, 200);
  assert.deepEqual(
    [...down.body.revoked_keys].sort(),
    [keys[0].id, keys[1].id].sort(),
    "the two oldest go",
  );
  const stored = (await s.kv.get<Record<string, unknown>>(KV.account(id))).value!;
  assert.ok(
    !("revoked" in stored),
    "the answer's list of revoked keys is not stored in the record",
  );
  for (const [i, k] of keys.entries()) {
    const r = await s.get("/v1/products/offers?asin=B07H57DNVV", k.key);
    await r.body?.cancel();
    assert.equal(r.status, i < 2 ? 401 : 200, `key ${i}`);
  }
  const up = await admin(s, "PATCH", `/admin/accounts/${id}`, { plan: "growth" });
  assert.deepEqual(up.body.revoked_keys, [], "an upgrade revokes nothing");
});

Deno.test("the stored and shown key prefix is exactly shelf_live_/shelf_test_ and four characters (issue 18.1)", async () => {
  await using s = await startServer({ adminToken: TOKEN });
  const id =
    (await admin(s, "POST", "/admin/accounts", { email: "prefix@example.com", plan: "growth" }))
      .body.id;
  for (const mode of ["live", "test"]) {
    const k = await admin(s, "POST", `/admin/accounts/${id}/keys`, { mode });
    assert.equal(k.body.prefix, k.body.key.slice(0, `shelf_${mode}_`.length + 4));
    assert.equal(k.body.prefix.length, `shelf_${mode}_`.length + 4);
    const listed = (await admin(s, "GET", `/admin/accounts/${id}/keys`)).body.keys.find((
      x: { id: string },
    ) => x.id === k.body.id);
    assert.equal(listed.prefix, k.body.prefix);
    assert.equal(listed.last4, k.body.key.slice(-4));
    const stored = JSON.stringify((await s.kv.get(KV.account(id))).value);
    assert.ok(
      !stored.includes(k.body.key.slice(0, `shelf_${mode}_`.length + 5)),
      "no fifth character of the secret is stored",
    );
  }
});

Deno.test("an account's key list and the pruning of its revoked keys never reach another account's revoked keys", async () => {
  await using s = await startServer({ adminToken: TOKEN });
  const make = async (email: string) =>
    (await admin(s, "POST", "/admin/accounts", { email, plan: "growth" })).body.id as string;
  const alice = await make("alice-keys@example.com");
  const bob = await make("bob-keys@example.com");
  const listed = async (id: string) =>
    (await admin(s, "GET", `/admin/accounts/${id}/keys`)).body.keys as {
      id: string;
      name?: string;
      status: string;
    }[];
  // Alice's revoked key is the oldest revoked key in the store.
  const gone =
    (await admin(s, "POST", `/admin/accounts/${alice}/keys`, { name: "alice-old" })).body;
  assert.equal((await admin(s, "DELETE", `/admin/keys/${gone.id}`)).status, 200);
  const kept = (await admin(s, "POST", `/admin/accounts/${alice}/keys`, { name: "alice" })).body;
  const bobKey = (await admin(s, "POST", `/admin/accounts/${bob}/keys`, { name: "bob-secret" }))
    .body;
  assert.equal((await admin(s, "DELETE", `/admin/keys/${bobKey.id}`)).status, 200);
  assert.deepEqual(
    (await listed(alice)).map((k) => k.id).sort(),
    [gone.id, kept.id].sort(),
    "Alice's list holds her own keys only, not Bob's revoked one",
  );
  assert.deepEqual((await listed(bob)).map((k) => k.id), [bobKey.id]);
  // Bob revokes enough keys to be pruned: only his own oldest revoked key is forgotten.
  for (let i = 1; i < KEPT_REVOKED_KEYS + 1; i++) {
    const k = await admin(s, "POST", `/admin/accounts/${bob}/keys`, { name: `bob-${i}` });
    assert.equal(k.status, 201);
    assert.equal((await admin(s, "DELETE", `/admin/keys/${k.body.id}`)).status, 200);
  }
  const bobs = await listed(bob);
  assert.equal(bobs.length, KEPT_REVOKED_KEYS);
  assert.ok(!bobs.some((k) => k.id === bobKey.id), "Bob's oldest revoked key is forgotten");
  assert.ok(!bobs.some((k) => k.id === gone.id), "Alice's key is not in Bob's list");
  const again = await admin(s, "DELETE", `/admin/keys/${gone.id}`);
  assert.equal(again.status, 200, "Alice's revoked key is still known: Bob's pruning left it");
  assert.equal(again.body.status, "revoked");
  assert.equal((await admin(s, "DELETE", `/admin/keys/${bobKey.id}`)).status, 404);
  assert.deepEqual((await listed(alice)).map((k) => k.id).sort(), [gone.id, kept.id].sort());
});
