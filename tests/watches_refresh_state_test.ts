/**
 * What a watch's record says after each kind of refresh, as GET /v1/watches shows it, with the
 * fake marketplace serving the real product page: a refresh the meter admits ends a pause even
 * when the page then fails; a refresh that succeeds clears the error of the one before; and the
 * watches are listed in the order they were created, whatever their ids.
 */
import assert from "node:assert/strict";
import { FAST_WATCHES, startRig } from "./upstream_harness.ts";
import { withTinyPlan } from "./tiny_plan.ts";
import { hourlyWatch, postWatch, receiver, until, watchList } from "./webhook_receiver.ts";
import { createWatch } from "../watches/store.ts";
import { MAX_WATCHES_PER_ACCOUNT } from "../schemas/watches.ts";

const DP = "https://www.amazon.com/dp/B07H57DNVV";
const PAGE = "product/amazon.com__app-B07H57DNVV.html";
const GONE = { status: 404, html: "<html><body>Not found</body></html>" };
const ADMIN_TOKEN = "t0ken-for-refresh-state-0123456789";

Deno.test("watch refresh: a paused watch whose next refresh is admitted but fails upstream is active again", async () => {
  await using rig = await startRig({
    watches: FAST_WATCHES,
    plans: withTinyPlan(1_000),
    plan: "tiny",
    adminToken: ADMIN_TOKEN,
  });
  await using hook = receiver();
  rig.fake.page(DP, PAGE);
  const r = await postWatch(rig.server.url, rig.key, hook.url, 1);
  assert.equal(r.status, 201);
  const { id } = await r.json();
  // Two credits: two refreshes, then the meter refuses and the watch pauses.
  const paused = await until("the pause", async () => {
    const w = (await watchList(rig.server.url, rig.key)).find((w) => w.id === id);
    return w?.status === "paused" ? w : undefined;
  }, 15_000);
  assert.equal(paused.paused_reason, "no credits left in this period");
  rig.fake.page(DP, GONE);
  const upgraded = await fetch(`${rig.server.url}/admin/accounts/${rig.accountId}`, {
    method: "PATCH",
    headers: { authorization: `Bearer ${ADMIN_TOKEN}`, "content-type": "application/json" },
    body: JSON.stringify({ plan: "scale" }),
  });
  assert.equal(upgraded.status, 200, await upgraded.text());
  const failed = await until("an admitted refresh that fails", async () => {
    const w = (await watchList(rig.server.url, rig.key)).find((w) => w.id === id);
    return w?.last_error ? w : undefined;
  }, 15_000);
  assert.match(failed.last_error!, /not_found/);
  assert.equal(failed.status, "active");
  assert.equal(failed.paused_reason, null);
});

Deno.test("watch refresh: a refresh that succeeds after a failed one clears last_error", async () => {
  await using rig = await startRig({ watches: FAST_WATCHES, plan: "scale" });
  await using hook = receiver();
  rig.fake.page(DP, GONE);
  const r = await postWatch(rig.server.url, rig.key, hook.url, 1);
  assert.equal(r.status, 201);
  const { id } = await r.json();
  const failed = await until("a failed refresh", async () => {
    const w = (await watchList(rig.server.url, rig.key)).find((w) => w.id === id);
    return w?.last_error ? w : undefined;
  });
  assert.match(failed.last_error!, /not_found/);
  rig.fake.page(DP, PAGE);
  const refreshed = await until("a refresh that succeeds", async () => {
    const w = (await watchList(rig.server.url, rig.key)).find((w) => w.id === id);
    return w?.refreshes ? w : undefined;
  }, 15_000);
  assert.equal(refreshed.last_error, null);
  assert.equal(refreshed.status, "active");
});

Deno.test("watches API: watches are listed in the order they were created, not by id", async () => {
  await using rig = await startRig({ watches: { ...FAST_WATCHES, run: false }, plan: "scale" });
  // Ids in one order, creation times in the other; the last two made in the same millisecond,
  // which their ids then order.
  const t0 = Date.now() - 60_000;
  const made = [5, 4, 3, 2, 1, 0].map((k, i) => ({
    ...hourlyWatch(rig.accountId, "key_unused"),
    id: `wat_00000000000000a${k}`,
    created_at: t0 + Math.min(i, 4) * 1_000,
  }));
  for (const w of made) assert.ok(await createWatch(rig.server.kv, w, MAX_WATCHES_PER_ACCOUNT));
  const listed = (await watchList(rig.server.url, rig.key)).map((w) => w.id);
  assert.deepEqual(listed, [
    "wat_00000000000000a5",
    "wat_00000000000000a4",
    "wat_00000000000000a3",
    "wat_00000000000000a2",
    "wat_00000000000000a0",
    "wat_00000000000000a1",
  ]);
});
