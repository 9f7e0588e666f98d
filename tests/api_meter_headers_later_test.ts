/**
 * The metering headers of an answer given after the call's own admission (probe DC): a search
 * whose further pages were charged tells its key's one-second window as the admission left it,
 * and a call admitted in the last moment of a period and answered in the next tells the new
 * period's credits and reset, whether it failed (its refund dropped with the old period) or not.
 * Real server on loopback, with the tests' clock and data source.
 */
import assert from "node:assert/strict";
import { ManualClock, meterHeadersOf, startServer } from "./test_server.ts";
import { parsePlans } from "../metering/plans.ts";
import { PERIOD_MS } from "../metering/account_state.ts";
import { ApiError } from "../core/api_error.ts";

const plans = parsePlans(JSON.stringify({
  plans: [{ id: "three", credits: 100, rate_limit_per_sec: 3, max_keys: 1, groups: ["products"] }],
}));
const OFFERS = "/v1/products/offers?asin=B07H57DNVV";

Deno.test("a search with further pages tells the key's window its call took, and the next call follows on", async () => {
  const clock = new ManualClock(Date.UTC(2026, 0, 5, 12, 0, 0, 0)); // a whole second
  await using s = await startServer({ clock, plans });
  const { key } = await s.account("three");
  s.source.searchPages = 3;
  const search = await meterHeadersOf(s.get("/v1/products/search?query=usb&limit=60", key));
  assert.deepEqual([search.status, search.cost, search.rate], [200, "3", '"per-key";r=2;t=1']);
  const next = await meterHeadersOf(s.get(OFFERS, key));
  assert.deepEqual([next.status, next.rate], [200, '"per-key";r=1;t=1']);
});

Deno.test("a call admitted as its period ends and answered in the next tells the new period's credits and reset", async () => {
  const clock = new ManualClock(Date.UTC(2026, 0, 5, 12));
  await using s = await startServer({ clock, plans });
  const { id, key } = await s.account("three");
  const end = (await s.accounts.get(id)).period_start + PERIOD_MS;
  const newEnd = new Date(end + PERIOD_MS).toISOString();
  clock.set(end - 5_000);
  for (let i = 0; i < 3; i++) assert.equal((await meterHeadersOf(s.get(OFFERS, key))).status, 200);

  // A failure: its refund is addressed to the ended period and dropped, so nothing comes back.
  clock.set(end - 1_000);
  s.source.delayMs = 300;
  s.source.failWith = new ApiError(502, "upstream_error", "the marketplace failed");
  const failing = meterHeadersOf(s.get(OFFERS, key));
  await new Promise((r) => setTimeout(r, 100));
  clock.set(end + 500);
  assert.deepEqual(await failing, {
    status: 502,
    cost: "0",
    remaining: "100",
    reset: newEnd,
    rate: '"per-key";r=3;t=1',
  });

  // A success answered after the next rollover: its credit is the ended period's.
  s.source.failWith = null;
  clock.set(end + PERIOD_MS - 1_000);
  const answered = meterHeadersOf(s.get(OFFERS, key));
  await new Promise((r) => setTimeout(r, 100));
  clock.set(end + PERIOD_MS + 500);
  assert.deepEqual(await answered, {
    status: 200,
    cost: "1",
    remaining: "100",
    reset: new Date(end + 2 * PERIOD_MS).toISOString(),
    rate: '"per-key";r=3;t=1',
  });
  const usage = await (await s.get("/v1/usage", key)).json();
  assert.deepEqual(
    [usage.requests_used, usage.period_end],
    [0, new Date(end + 2 * PERIOD_MS).toISOString()],
  );
});
