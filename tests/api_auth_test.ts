import assert from "node:assert/strict";
import { startServer } from "./test_server.ts";

const OFFERS = "/v1/products/offers?asin=B07H57DNVV";

Deno.test("a data call without a key gets 401 telling how to send one", async () => {
  await using s = await startServer();
  const r = await s.get(OFFERS);
  assert.equal(r.status, 401);
  const body = await r.json();
  assert.equal(body.error.code, "unauthorized");
  assert.equal(body.error.status, 401);
  assert.match(body.error.message, /x-api-key/);
  assert.match(body.error.message, /Bearer/);
});

Deno.test("the key is accepted as x-api-key, Bearer token and api_key query alike", async () => {
  await using s = await startServer({ plans: undefined });
  const { key } = await s.account("starter");
  const viaHeader = await s.get(OFFERS, key);
  assert.equal(viaHeader.status, 200);
  await viaHeader.body?.cancel();
  const viaBearer = await fetch(s.url + OFFERS, { headers: { authorization: `Bearer ${key}` } });
  assert.equal(viaBearer.status, 200);
  await viaBearer.body?.cancel();
  const viaQuery = await fetch(`${s.url}${OFFERS}&api_key=${key}`);
  assert.equal(viaQuery.status, 200);
  await viaQuery.body?.cancel();
});

Deno.test("a blank x-api-key is no key: the Bearer token or api_key that follows is read", async () => {
  await using s = await startServer();
  const { key } = await s.account("growth"); // seven calls in a second: past starter's rate
  // Fetch and the runtime drop spaces and tabs around a value; JavaScript trims more (U+00A0).
  for (const blank of ["", " ", "\t \t", "\u00a0"]) {
    const bearer = await fetch(s.url + OFFERS, {
      headers: { "x-api-key": blank, authorization: `Bearer ${key}` },
    });
    assert.equal(bearer.status, 200, `x-api-key ${JSON.stringify(blank)} with a Bearer token`);
    await bearer.body?.cancel();
    const query = await fetch(`${s.url}${OFFERS}&api_key=${key}`, {
      headers: { "x-api-key": blank },
    });
    assert.equal(query.status, 200, `x-api-key ${JSON.stringify(blank)} with api_key`);
    await query.body?.cancel();
  }
  const none = await fetch(s.url + OFFERS, { headers: { "x-api-key": " " } });
  assert.equal(none.status, 401);
  await none.body?.cancel();
});

Deno.test("a repeated api_key takes its last value, as every other parameter does", async () => {
  await using s = await startServer();
  const { key } = await s.account("starter");
  const last = await fetch(`${s.url}${OFFERS}&api_key=shelf_live_${"0".repeat(48)}&api_key=${key}`);
  assert.equal(last.status, 200, "probe BQ: the first value was taken");
  await last.body?.cancel();
  const first = await fetch(`${s.url}${OFFERS}&api_key=${key}&api_key=nope`);
  assert.equal(first.status, 401);
  await first.body?.cancel();
});

Deno.test("unknown, malformed and revoked keys get the same 401 body", async () => {
  await using s = await startServer();
  const { key, keyId } = await s.account("starter");
  const unknown = await (await s.get(OFFERS, "shelf_live_" + "0".repeat(48))).json();
  const malformed = await (await s.get(OFFERS, "hello")).json();
  const ok = await s.get(OFFERS, key);
  assert.equal(ok.status, 200);
  await ok.body?.cancel();
  await s.accounts.revokeKey(keyId);
  const revoked = await s.get(OFFERS, key);
  assert.equal(revoked.status, 401);
  assert.deepEqual(await revoked.json(), unknown);
  assert.deepEqual(malformed, unknown);
});

Deno.test("a revocation made by another process is seen by the very next call", async () => {
  await using s = await startServer();
  const { key, keyId } = await s.account("starter");
  const first = await s.get(OFFERS, key);
  assert.equal(first.status, 200);
  await first.body?.cancel();
  // A second store handle on the same file stands for the CLI or another instance.
  const other = await Deno.openKv(s.kvPath);
  const { Accounts } = await import("../metering/accounts.ts");
  const { builtinPlans } = await import("../metering/plans.ts");
  const { systemClock } = await import("../metering/clock.ts");
  await new Accounts(other, builtinPlans(), systemClock).revokeKey(keyId);
  other.close();
  const next = await s.get(OFFERS, key);
  assert.equal(next.status, 401);
  await next.body?.cancel();
});

Deno.test("GET /v1/ needs no key and an unknown path is 404 not_found without one", async () => {
  await using s = await startServer();
  const index = await s.get("/v1/");
  assert.equal(index.status, 200);
  const body = await index.json();
  assert.ok(body.endpoints.some((e: { path: string }) => e.path === "/v1/products/search"));
  const missing = await s.get("/v1/nope");
  assert.equal(missing.status, 404);
  assert.deepEqual((await missing.json()).error.code, "not_found");
});

Deno.test("the Authorization scheme is case-insensitive (bearer, BEARER, BeArEr), as HTTP says (18.2)", async () => {
  await using s = await startServer();
  const { key } = await s.account("starter");
  for (const scheme of ["bearer", "BEARER", "BeArEr", "Bearer"]) {
    const r = await fetch(s.url + OFFERS, { headers: { authorization: `${scheme} ${key}` } });
    assert.equal(r.status, 200, scheme);
    await r.body?.cancel();
  }
  for (const bad of [`Basic ${key}`, `Bearer`, `Bearer${key}`, key]) {
    const r = await fetch(s.url + OFFERS, { headers: { authorization: bad } });
    assert.equal(r.status, 401, bad.slice(0, 12));
    await r.body?.cancel();
  }
  const usage = await (await s.get("/v1/usage", key)).json();
  assert.equal(
    usage.requests_used,
    4,
    "each accepted scheme spelling was charged once, the refused ones not",
  );
});

Deno.test("keys made and revoked in a loop do not grow the store: the newest revoked ones are kept, older ones are forgotten and stay refused", async () => {
  await using s = await startServer();
  const { KEPT_REVOKED_KEYS } = await import("../metering/accounts.ts");
  const { KV } = await import("../metering/kv_layout.ts");
  const { id, key: liveKey } = await s.account("free");
  const live = (await s.accounts.listKeys(id))[0];
  await s.accounts.revokeKey(live.id); // the free plan allows one active key
  const count = async (prefix: Deno.KvKey) => {
    let n = 0;
    for await (const _ of s.kv.list({ prefix })) n++;
    return n;
  };
  const before = { hash: await count(["key_hash"]), id: await count(["key_id"]) };
  const cycles = KEPT_REVOKED_KEYS + 20;
  const values: string[] = [];
  for (let i = 0; i < cycles; i++) {
    const { key, value } = await s.accounts.createKey(id, { name: `churn ${i}` });
    values.push(value);
    await s.accounts.revokeKey(key.id);
  }
  assert.equal(await count(KV.revokedKeys(id)), KEPT_REVOKED_KEYS);
  const kept = (await s.accounts.listKeys(id)).map((k) => k.name);
  assert.ok(kept.includes(`churn ${cycles - 1}`), "the newest revoked key is kept");
  assert.ok(!kept.includes("churn 0"), "the oldest is forgotten");
  // The first key and 20 churned ones forgotten: their index entries went with them.
  assert.equal(await count(["key_hash"]), before.hash + cycles - 21);
  assert.equal(await count(["key_id"]), before.id + cycles - 21);
  for (const value of [liveKey, values[0], values[cycles - 1]]) {
    const r = await s.get(OFFERS, value);
    assert.equal(r.status, 401, "forgotten and kept revoked keys alike are refused");
    await r.body?.cancel();
  }
});
