/**
 * A store that answers reads but refuses writes (here: another program holds SQLite's write lock
 * on the KV file, as a full disk would also make every commit throw) fails metered calls at once
 * with 503 `unavailable`, uncharged and logged as `store write failed`, not as an account "busy"
 * after dozens of retries; once the store takes writes again, calls are served and charged.
 * Real server on loopback, real KV file, a real second SQLite connection holding the lock.
 */
import assert from "node:assert/strict";
import { DatabaseSync } from "node:sqlite";
import { startServer } from "./test_server.ts";

Deno.test("a store that refuses writes: 503 unavailable, logged, nothing charged; served again once it writes", async () => {
  await using s = await startServer();
  const { id, key } = await s.account("starter");
  const call = async () => {
    const r = await s.get("/v1/products/offers?asin=B07H57DNVV", key);
    return { status: r.status, body: await r.json(), headers: r.headers };
  };
  assert.equal((await call()).status, 200);
  const lock = new DatabaseSync(s.kvPath);
  try {
    lock.exec("BEGIN EXCLUSIVE");
    const refused = await call();
    assert.equal(refused.status, 503);
    assert.equal(refused.body.error.code, "unavailable");
    assert.equal(refused.headers.get("retry-after"), "1");
    assert.ok(s.errors.some((e) => e.startsWith("store write failed")), s.errors.join("\n"));
  } finally {
    lock.exec("ROLLBACK");
    lock.close();
  }
  assert.equal((await call()).status, 200);
  assert.equal((await s.accounts.get(id)).used, 2, "the refused call was not charged");
});
