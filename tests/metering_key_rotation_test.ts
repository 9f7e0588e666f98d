/**
 * Keys made, used once and revoked, again and again: the account record counted each key's credits
 * apart for the rest of the period, so 2,697 such keys took it past KV's 64 KiB value limit and
 * every call of the account failed until the period's end (probe P). Past MAX_KEY_TALLIES the
 * revoked keys' credits are counted together.
 */
import assert from "node:assert/strict";
import { ManualClock, startServer } from "./test_server.ts";
import { FOLDED_KEYS, MAX_KEY_TALLIES } from "../metering/account_state.ts";

Deno.test("a period of key rotation keeps the account record small, and every credit counted", async () => {
  const clock = new ManualClock(Date.UTC(2026, 0, 1, 12, 0, 0, 0));
  await using s = await startServer({ clock });
  const { id, key, keyId } = await s.account("growth");
  const cycles = 3 * MAX_KEY_TALLIES;
  for (let i = 0; i < cycles; i++) {
    // A second each: a key made in the second another was revoked in shares its rate window.
    clock.advance(1000);
    const made = await s.accounts.createKey(id);
    const r = await s.get("/v1/products/offers?asin=B07H57DNVV", made.value);
    assert.equal(r.status, 200);
    await r.body?.cancel();
    await s.accounts.revokeKey(made.key.id);
  }
  const kept = await s.get("/v1/products/offers?asin=B07H57DNVV", key);
  assert.equal(kept.status, 200);
  await kept.body?.cancel();
  const record = await s.accounts.get(id);
  const byKey = record.by_key ?? {};
  assert.ok(
    Object.keys(byKey).length <= MAX_KEY_TALLIES + 1,
    `${Object.keys(byKey).length} tallies`,
  );
  assert.equal(byKey[keyId], 1, "the active key is counted apart");
  assert.ok(byKey[FOLDED_KEYS] > 0, "revoked keys are counted together");
  const total = Object.values(byKey).reduce((a, b) => a + b, 0);
  assert.equal(total, cycles + 1, "no credit lost from the tally");
  assert.equal(record.used, cycles + 1);
  assert.ok(JSON.stringify(record).length < 16_000, `${JSON.stringify(record).length} bytes`);
});
