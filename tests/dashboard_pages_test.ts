/**
 * What the dashboard's keys and watches pages show, over real HTTP (probe HG survivors): a key
 * as prefix…last4 on the list and on the revoke page, its last use, mode, revoke time and the
 * active count right after a change; the revoke saved before its redirect; a watch's zip, state,
 * last error and delivery results, and of its webhook URL only the host.
 */
import assert from "node:assert/strict";
import { ManualClock, startServer } from "./test_server.ts";
import { browser, signUpOpen } from "./dashboard_client.ts";
import { FAST_WATCHES, startRig } from "./upstream_harness.ts";
import { fixture } from "./fixture.ts";
import { receiver, until } from "./webhook_receiver.ts";
import { WatchCreated, WatchList, type WatchView } from "../schemas/watches.ts";
import { DatabaseSync } from "node:sqlite";

const T0 = Date.parse("2026-03-02T08:00:00Z");
const HOUR = 3_600_000;
const pause = () => new Promise((r) => setTimeout(r, 120)); // under the dashboard's 20 a second
const NEW_KEY = /id="new-key-value"[^>]*value="([^"]+)"|value="([^"]+)"[^>]*id="new-key-value"/;

/** The `<tr>` of key `id` on a keys page, or "". */
function row(page: string, id: string): string {
  return new RegExp(`<tr data-key-id="${id}">[\\s\\S]*?</tr>`).exec(page)?.[0] ?? "";
}

/** The text of a cell `label` in a row, tags dropped. */
function cell(tr: string, label: string): string {
  const m = new RegExp(`<td data-label="${label}"[^>]*>([\\s\\S]*?)</td>`).exec(tr);
  return (m?.[1] ?? "").replace(/<[^>]*>/g, "").trim();
}

Deno.test("dashboard keys page: prefix…last4, last use, mode, revoke time and counts as they are now; a call with a key revoked on the page is refused", async () => {
  const clock = new ManualClock(T0);
  await using s = await startServer({ signup: "open", clock });
  const b = browser(s.url);
  const email = `pages${crypto.randomUUID()}@example.com`;
  await signUpOpen(b, email);
  const me = (await s.accounts.idByEmail(email))!;
  await s.accounts.update(me, { plan: "starter" }); // 3 active keys at most
  for (const k of await s.accounts.listKeys(me)) await s.accounts.revokeKey(k.id);

  /** Creates a key with the page's form; the page answered and the key's value. */
  const create = async (name: string, mode: string) => {
    const page = await b.send("/dashboard/keys");
    const formId = /name="form_id" value="([0-9a-f]+)"/.exec(page.text)?.[1] ?? "";
    await pause();
    const made = await b.send("/dashboard/keys", {
      form: { _csrf: page.csrf, form_id: formId, name, mode },
    });
    assert.equal(made.status, 200);
    const m = NEW_KEY.exec(made.text);
    const value = m?.[1] ?? m?.[2] ?? "";
    assert.ok(value, "the new key's value is shown");
    await pause();
    return { page: made.text, value };
  };
  const idOf = async (value: string) =>
    (await s.accounts.listKeys(me)).find((k) =>
      value.endsWith(k.last4) && value.startsWith(k.prefix)
    )!
      .id;

  const alpha = await create("alpha", "live");
  assert.match(alpha.page, /Your new live key “alpha”/);
  const alphaId = await idOf(alpha.value);
  clock.advance(3 * HOUR);
  const beta = await create("beta", "test");
  assert.match(beta.page, /Your new test key “beta”/, "a test key is called a test key");
  assert.match(beta.page, /2 of 3 active keys/);

  // alpha is used 2 h later: its last use differs from its creation time.
  clock.advance(2 * HOUR);
  const used = T0 + 5 * HOUR;
  const call = await s.get("/v1/products/offers?asin=B07H57DNVV", alpha.value);
  assert.equal(call.status, 200);
  await call.body?.cancel();
  for (let i = 0; i < 50; i++) {
    const k = (await s.accounts.listKeys(me)).find((k) => k.id === alphaId)!;
    if (k.last_used_at === used) break;
    await new Promise((r) => setTimeout(r, 50));
  }
  const listed = await b.send("/dashboard/keys");
  const alphaRow = row(listed.text, alphaId);
  const shown = `${alpha.value.slice(0, 15)}…${alpha.value.slice(-4)}`;
  assert.equal(cell(alphaRow, "Key"), shown, "the list shows prefix…last4");
  assert.equal(cell(alphaRow, "Mode"), "live");
  assert.equal(cell(alphaRow, "Created"), "2026-03-02 08:00 UTC");
  assert.equal(cell(alphaRow, "Last used"), "2026-03-02 13:00 UTC");
  await pause();

  const confirm = await b.send(`/dashboard/keys/${alphaId}/revoke`);
  assert.equal(confirm.status, 200);
  assert.ok(
    confirm.text.includes(`<span class="mono">${shown}</span>`),
    "revoke page: prefix…last4",
  );
  assert.match(confirm.text, /\(live\), last used 2026-03-02 13:00 UTC\./);
  await pause();

  // The third key reaches the plan's limit: the page right after says so.
  const gamma = await create("gamma", "live");
  assert.match(gamma.page, /3 of 3 active keys/, "the count right after the creation");
  assert.match(gamma.page, /allows 3\s+active keys\. Revoke a key to create another\./);

  // Revoking alpha: a call with it right after the redirect is refused.
  clock.advance(HOUR);
  const revoked = await b.send(`/dashboard/keys/${alphaId}/revoke`, {
    form: { _csrf: confirm.csrf },
  });
  assert.equal(revoked.status, 303);
  assert.equal(revoked.headers.get("location"), "/dashboard/keys?revoked=1");
  const refused = await s.get("/v1/products/offers?asin=B07H57DNVV", alpha.value);
  assert.equal(refused.status, 401, "a call with the revoked key right after the revoke");
  await refused.body?.cancel();
  const after = await b.send("/dashboard/keys?revoked=1");
  assert.match(after.text, /The key is revoked\. Calls with it now get 401\./);
  const gone = row(after.text, alphaId);
  assert.equal(cell(gone, "Status"), "revoked 2026-03-02 14:00 UTC", "the revoke time is shown");
  assert.equal(cell(gone, "Key"), shown);
  assert.ok(!gone.includes("/revoke"), "no revoke link on a revoked key");
  assert.ok(row(after.text, await idOf(gamma.value)).includes(`/revoke`), "an active key has one");
  assert.match(after.text, /2 of 3 active keys/, "revoked keys are not counted");
  assert.doesNotMatch(after.text, /Revoke a key to create another/);
  await pause();

  // The revoke page of a revoked key offers no form: not for a key moved out of the record, nor
  // for one a record written before revoked keys moved out still holds (revokeKey's "legacy").
  const again = await b.send(`/dashboard/keys/${alphaId}/revoke`);
  assert.notEqual(again.status, 200);
  assert.doesNotMatch(again.text, /Revoke this key\?/);
  await pause();
  const record = await s.kv.get<{ keys: Record<string, unknown> }>(["account", me]);
  assert.ok(record.value?.keys, "the account record holds its keys");
  const legacyId = "key_0123456789abcdef";
  record.value.keys[legacyId] = {
    ...(record.value.keys[await idOf(gamma.value)] as object),
    id: legacyId,
    name: "legacy",
    status: "revoked",
    revoked_at: T0,
  };
  assert.ok((await s.kv.atomic().check(record).set(record.key, record.value).commit()).ok);
  assert.equal((await s.accounts.get(me)).keys[legacyId]?.status, "revoked");
  const legacy = await b.send(`/dashboard/keys/${legacyId}/revoke`);
  assert.equal(legacy.status, 303, "a revoked key's revoke page sends back to the list");
  assert.equal(legacy.headers.get("location"), "/dashboard/keys");
  assert.doesNotMatch(legacy.text, /Revoke this key\?/);
});

const DP = "https://www.amazon.com/dp/B07H57DNVV";
const PAGE = "product/amazon.com__app-B07H57DNVV.html";

Deno.test("dashboard watches page: zip, pause reason, last refresh error and delivery results; of the webhook URL only its host", async () => {
  await using rig = await startRig({ watches: FAST_WATCHES, plan: "scale" });
  await using hook = receiver();
  const html = await fixture(PAGE);
  rig.fake.page(DP, PAGE);
  rig.fake.page("https://www.amazon.com/dp/B0000GONE0", {
    status: 404,
    html: "<html><body>Not found</body></html>",
  });
  const base = rig.server.url;
  const b = browser(base);
  const email = `watches${crypto.randomUUID()}@example.com`;
  await signUpOpen(b, email);
  const owner = (await rig.server.accounts.idByEmail(email))!;
  await rig.server.accounts.update(owner, { plan: "scale" });
  const key = (await rig.server.accounts.createKey(owner)).value;
  const doomed = await rig.server.accounts.createKey(owner);
  // A webhook URL whose path and query hold secrets, on the real receiver.
  const origin = new URL(hook.url).origin;
  const webhook = `${origin}/T0PATHSECRET/hook?token=QUERYSECRET`;
  const watch = async (k: string, body: Record<string, unknown>) => {
    const r = await fetch(`${base}/v1/watches`, {
      method: "POST",
      headers: { "x-api-key": k, "content-type": "application/json" },
      body: JSON.stringify({ every_seconds: 1, webhook_url: webhook, ...body }),
    });
    assert.equal(r.status, 201);
    return WatchCreated.parse(await r.json()).id;
  };
  const priced = await watch(key, { asin: "B07H57DNVV", on: ["price"] });
  const failing = await watch(key, { asin: "B0000GONE0", zip: "10001", on: ["price"] });
  const paused = await watch(doomed.value, { asin: "B07H57DNVV", on: ["rank"] });
  await rig.server.accounts.revokeKey(doomed.key.id); // its watch pauses at its next refresh

  const list = async () =>
    WatchList.parse(
      await (await fetch(`${base}/v1/watches`, { headers: { "x-api-key": key } })).json(),
    ).watches;
  const byId = (ws: WatchView[], id: string) => ws.find((w) => w.id === id)!;
  await until(
    "the first refresh",
    async () => byId(await list(), priced).refreshes ? 1 : undefined,
  );
  rig.fake.page(DP, { html: html.replaceAll("$11.88", "$9.99") });
  const seen = await until("a delivery, an error and a pause", async () => {
    const ws = await list();
    return byId(ws, priced).deliveries.some((d) => d.delivered) &&
        byId(ws, failing).last_error && byId(ws, paused).status === "paused"
      ? ws
      : undefined;
  });
  assert.ok(hook.got.length >= 1);

  const dash = await b.send("/dashboard/watches");
  assert.equal(dash.status, 200);
  const card = (id: string) =>
    new RegExp(`<div class="card" id="${id}">[\\s\\S]*?</table>`).exec(dash.text)?.[0] ?? "";
  const text = (html: string) => html.replace(/<[^>]*>/g, " ").replace(/\s+/g, " ");

  // Of the webhook URL, the host only: never its path or query.
  for (const id of [priced, failing, paused]) {
    assert.ok(
      card(id).includes(`<dd>${new URL(webhook).host}</dd>`),
      "the webhook's host is shown",
    );
  }
  assert.ok(!dash.text.includes("T0PATHSECRET"), "the webhook's path is not shown");
  assert.ok(!dash.text.includes("QUERYSECRET"), "the webhook's query is not shown");

  // The zip beside the product; the delivery results as the API lists them.
  assert.match(text(card(failing)), /B0000GONE0 · US · 10001/);
  const results = [...card(priced).matchAll(/data-label="Result">([^<]*)</g)].map((m) => m[1]);
  assert.deepEqual(results, byId(seen, priced).deliveries.map((d) => d.result));
  assert.ok(results.includes("delivered (HTTP 204)"));

  // The last refresh error and the pause reason.
  const error = byId(seen, failing).last_error!;
  assert.ok(
    text(card(failing)).includes(`Last refresh failed: ${error}`),
    "the last refresh error is shown",
  );
  assert.equal(byId(seen, paused).paused_reason, "the key that created the watch is revoked");
  assert.match(
    text(card(paused)),
    /State paused \(the key that created the watch is revoked\)/,
    "the pause reason is shown",
  );
  for (const id of [priced, failing]) {
    await (await fetch(`${base}/v1/watches/${id}`, {
      method: "DELETE",
      headers: { "x-api-key": key },
    })).body?.cancel();
  }
});

Deno.test("dashboard: a key's revoke answers only once the store holds it (another program holding the store's write lock keeps the page waiting)", async () => {
  await using s = await startServer({ signup: "open" });
  const b = browser(s.url);
  const email = `revoke-wait${crypto.randomUUID()}@example.com`;
  await signUpOpen(b, email);
  const me = (await s.accounts.idByEmail(email))!;
  const { key } = await s.accounts.createKey(me);
  const confirm = await b.send(`/dashboard/keys/${key.id}/revoke`);
  assert.equal(confirm.status, 200);
  // Another program takes the store's write lock: the revoke's commit waits for it (and is tried
  // again while it is held, about 3 s in all), so its page cannot answer before it is let go.
  const other = new DatabaseSync(s.kvPath);
  other.exec("PRAGMA busy_timeout = 0");
  other.exec("BEGIN IMMEDIATE");
  let answered = false;
  const revoking = b.send(`/dashboard/keys/${key.id}/revoke`, { form: { _csrf: confirm.csrf } })
    .finally(() => (answered = true));
  try {
    // Long enough for a page that does not wait for its revoke to have answered.
    for (let i = 0; i < 25 && !answered; i++) await new Promise((r) => setTimeout(r, 20));
    assert.equal(answered, false, "the page answered while the revoke could not be written");
  } finally {
    other.exec("COMMIT");
    other.close();
  }
  const revoked = await revoking;
  assert.equal(revoked.status, 303);
  assert.equal(
    (await s.accounts.listKeys(me)).find((k) => k.id === key.id)?.status,
    "revoked",
  );
});
