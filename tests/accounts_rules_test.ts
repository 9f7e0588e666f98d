/**
 * Rules of metering/accounts.ts an operator meets through the admin API, or a caller of the
 * Accounts class: the longest address an account may have, an account listing's usage after its
 * period ended, and the audit trail of revoked keys kept to its bound when a plan downgrade is
 * what revoked them. A real server on loopback with a manual clock.
 */
import assert from "node:assert/strict";
import { adminApi } from "./admin_calls.ts";
import { ManualClock, startServer } from "./test_server.ts";
import { KEPT_REVOKED_KEYS } from "../metering/accounts.ts";
import { PERIOD_MS } from "../metering/account_state.ts";

const TOKEN = "accounts-rules-test-token-0123456789";
const OFFERS = "/v1/products/offers?asin=B07H57DNVV";

const admin = adminApi(TOKEN);

/** A plain address of `length` characters: a local part of 64, and labels of at most 63. */
function addressOf(length: number): string {
  const local = "a".repeat(64);
  const rest = length - local.length - 1 - (63 + 1) * 2 - ".com".length;
  const address = `${local}@${"b".repeat(63)}.${"c".repeat(63)}.${"d".repeat(rest)}.com`;
  assert.equal(address.length, length);
  return address;
}

Deno.test("an address of 254 characters makes an account; one of 255 is refused with invalid_email", async () => {
  await using s = await startServer({ adminToken: TOKEN });
  const longest = await admin(s, "POST", "/admin/accounts", { email: addressOf(254) });
  assert.equal(longest.status, 201, JSON.stringify(longest.body));
  assert.equal(longest.body.email, addressOf(254));
  const over = await admin(s, "POST", "/admin/accounts", { email: addressOf(255) });
  assert.equal(over.status, 422, JSON.stringify(over.body));
  assert.equal(over.body.error.code, "invalid_email");
  const listed = await admin(s, "GET", "/admin/accounts");
  assert.deepEqual(listed.body.accounts.map((a: { email: string }) => a.email), [addressOf(254)]);
});

Deno.test("an account listing after the credit period ended shows the new period, nothing used, as the account itself does", async () => {
  const clock = new ManualClock(Date.UTC(2026, 0, 1, 12, 0, 0, 0));
  await using s = await startServer({ clock });
  const { id, key } = await s.account("free");
  const call = await s.get(OFFERS, key);
  assert.equal(call.status, 200);
  await call.body?.cancel();
  const during = (await s.accounts.list()).accounts.find((a) => a.id === id)!;
  assert.equal(during.used, 1);

  clock.advance(PERIOD_MS + 1_000);
  const shown = await s.accounts.get(id);
  assert.equal(shown.used, 0, "the account shows the new period");
  const listed = (await s.accounts.list()).accounts.find((a) => a.id === id)!;
  assert.equal(listed.used, 0, "the listing shows no credits of the period that ended");
  assert.equal(listed.period_start, shown.period_start);
});

Deno.test("keys a plan downgrade revokes count towards the revoked keys kept: the oldest beyond the bound are forgotten", async () => {
  const clock = new ManualClock(Date.UTC(2026, 0, 1, 12, 0, 0, 0));
  await using s = await startServer({ clock, adminToken: TOKEN });
  const { id } = await s.account("growth"); // 10 keys
  // A full audit trail: KEPT_REVOKED_KEYS keys made and revoked, a second apart.
  const first: string[] = [];
  for (let i = 0; i < KEPT_REVOKED_KEYS; i++) {
    clock.advance(1_000);
    const { key } = await s.accounts.createKey(id, { name: `cycle ${i}` });
    await s.accounts.revokeKey(key.id);
    if (i < 3) first.push(key.id);
  }
  for (let i = 0; i < 3; i++) {
    clock.advance(1_000);
    await s.accounts.createKey(id, { name: `kept ${i}` });
  }
  clock.advance(1_000);
  const downgraded = await admin(s, "PATCH", `/admin/accounts/${id}`, { plan: "free" });
  assert.equal(downgraded.status, 200, JSON.stringify(downgraded.body));
  assert.equal(downgraded.body.revoked_keys.length, 3, "four active keys, one kept");

  const listed = (await admin(s, "GET", `/admin/accounts/${id}/keys`)).body.keys as {
    id: string;
    status: string;
  }[];
  assert.equal(listed.filter((k) => k.status === "active").length, 1);
  assert.equal(listed.filter((k) => k.status === "revoked").length, KEPT_REVOKED_KEYS);
  const ids = new Set(listed.map((k) => k.id));
  for (const keyId of downgraded.body.revoked_keys) assert.ok(ids.has(keyId), "newest kept");
  for (const keyId of first) {
    assert.ok(!ids.has(keyId), `${keyId}, revoked first, is no longer listed`);
    const gone = await admin(s, "DELETE", `/admin/keys/${keyId}`);
    assert.equal(gone.status, 404, `${keyId} is forgotten whole, its index entry too`);
  }
});
