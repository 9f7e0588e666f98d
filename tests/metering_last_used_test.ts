/**
 * Last used (SPEC: "Last-used time is recorded per key"; README: updated with the charge commit of
 * every admitted call, and by a free /v1/usage call at most once a minute, to spare a write).
 * Real server on loopback, real KV file, a clock moved by hand.
 */
import assert from "node:assert/strict";
import { ManualClock, startServer } from "./test_server.ts";

const OFFERS = "/v1/products/offers?asin=B07H57DNVV";

Deno.test("last used: every charged call sets it; /v1/usage refreshes it at most once a minute", async () => {
  const T0 = Date.UTC(2026, 0, 5, 12, 0, 0);
  const clock = new ManualClock(T0);
  await using s = await startServer({ clock });
  const { id, key } = await s.account("growth");
  const lastUsed = async () => (await s.accounts.listKeys(id))[0].last_used_at;
  assert.equal(await lastUsed(), null);

  (await s.get(OFFERS, key)).body?.cancel();
  assert.equal(await lastUsed(), T0, "a charged call records its time");

  clock.advance(30_000);
  (await s.get("/v1/usage", key)).body?.cancel();
  assert.equal(await lastUsed(), T0, "a usage call within the minute writes nothing");

  clock.advance(30_000);
  (await s.get("/v1/usage", key)).body?.cancel();
  assert.equal(await lastUsed(), T0 + 60_000, "a minute later it refreshes");

  clock.advance(1_000);
  (await s.get(OFFERS, key)).body?.cancel();
  assert.equal(await lastUsed(), T0 + 61_000, "a charged call always does");
});
