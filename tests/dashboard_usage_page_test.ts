/**
 * What the dashboard's usage page shows of an account's record and alerts: the progress bar
 * capped at its max, a non-active status, the folded keys' label, no zero rows, each alert's
 * recipient (and up to 20 alerts), today's bar and the period's last day in the chart, times to
 * the minute. Real server on loopback, real KV file, plain HTTP; some record fields are written
 * to the store directly, as an older record or a long period would have left them.
 */
import assert from "node:assert/strict";
import { ManualClock, startServer, type TestServer } from "./test_server.ts";
import { browser } from "./dashboard_client.ts";
import { FOLDED_KEYS, PERIOD_MS } from "../metering/account_state.ts";
import type { Alert } from "../metering/alerts.ts";
import { KV } from "../metering/kv_layout.ts";
import { editRecord } from "./meter_store.ts";

const PASSWORD = "correct horse battery";
const DAY = 86_400_000;
/** May 10 2030, 09:37:00 UTC: a period start whose minute the page must show. */
const START = Date.UTC(2030, 4, 10, 9, 37, 0);

async function signedUp(s: TestServer, email: string) {
  const b = browser(s.url);
  const page = await b.send("/dashboard/signup");
  const r = await b.send("/dashboard/signup", {
    form: { _csrf: page.csrf, email, password: PASSWORD },
  });
  assert.equal(r.status, 303);
  const id = (await s.accounts.idByEmail(email))!;
  assert.ok(id);
  return { b, id };
}

function alert(id: string, n: number, to: string, createdAt: number): Alert {
  return {
    id: `alr_${String(n).padStart(15, "0")}_080`,
    account_id: id,
    threshold: 80,
    plan: "free",
    included: 50,
    used: 40,
    period_start: START,
    period_end: START + PERIOD_MS,
    to,
    created_at: createdAt,
    status: "pending",
    attempts: 0,
    next_attempt_at: 0,
    lease_until: 0,
    last_error: null,
    delivered_at: null,
  };
}

function cell(html: string, label: string): string[] {
  return [...html.matchAll(new RegExp(`<td data-label="${label}"[^>]*>([^<]*)</td>`, "g"))]
    .map((m) => m[1]);
}

Deno.test("usage page: usage past the allowance fills the progress bar to its max, not past it", async () => {
  const clock = new ManualClock(START);
  await using s = await startServer({ signup: "open", clock });
  const { b, id } = await signedUp(s, "over-bar@example.com");
  await editRecord(s.kv, id, (a) => void (a.used = 65)); // free plan: 50 credits
  const html = (await b.send("/dashboard/usage")).text;
  assert.match(html, /<strong id="used">65<\/strong> of <strong>50<\/strong>/);
  const progress = /<progress[^>]*id="credits"[^>]*>/.exec(html)?.[0] ?? "";
  assert.match(progress, /value="50"/);
  assert.match(progress, /max="50"/);
});

Deno.test("usage page: an inactive account's status is shown beside its plan", async () => {
  const clock = new ManualClock(START);
  await using s = await startServer({ signup: "open", clock });
  const { b, id } = await signedUp(s, "inactive@example.com");
  const active = (await b.send("/dashboard/usage")).text;
  assert.match(active, /<dt>Plan<\/dt><dd>free<\/dd>/);
  await s.accounts.update(id, { status: "inactive" });
  const html = (await b.send("/dashboard/usage")).text;
  assert.match(html, /<dt>Plan<\/dt><dd>free \(inactive\)<\/dd>/);
});

Deno.test("usage page: folded revoked keys are named as such, and rows of zero credits are left out", async () => {
  const clock = new ManualClock(START);
  await using s = await startServer({ signup: "open", clock });
  const { b, id } = await signedUp(s, "folded@example.com");
  const k = await s.accounts.createKey(id, { name: "kept" });
  await editRecord(s.kv, id, (a) => {
    a.used = 9;
    a.by_key = { [k.key.id]: 2, [FOLDED_KEYS]: 7, key_gone: 0 };
    a.by_endpoint = { "/v1/products/offers": 9, "/v1/deals": 0 };
  });
  const html = (await b.send("/dashboard/usage")).text;
  const byKey = /<table[^>]*id="by-key"[\s\S]*?<\/table>/.exec(html)?.[0] ?? "";
  assert.deepEqual(cell(byKey, "Key"), [
    "keys revoked earlier this period",
    `kept (${k.key.prefix}…${k.key.last4})`,
  ]);
  assert.deepEqual(cell(byKey, "Credits"), ["7", "2"]);
  assert.doesNotMatch(byKey, /no longer listed/);
  const byEndpoint = /<table[^>]*id="by-endpoint"[\s\S]*?<\/table>/.exec(html)?.[0] ?? "";
  assert.deepEqual(cell(byEndpoint, "Endpoint"), ["/v1/products/offers"]);
  assert.deepEqual(cell(byEndpoint, "Credits"), ["9"]);
});

Deno.test("usage page: alerts show whom they went to, and up to 20 of them are listed, newest first", async () => {
  const clock = new ManualClock(START);
  await using s = await startServer({ signup: "open", clock });
  const { b, id } = await signedUp(s, "alerts@example.com");
  for (let n = 1; n <= 21; n++) {
    const a = alert(id, n, `team${n}@example.org`, START + n * 60_000);
    await s.kv.set(KV.alert(id, a.id), a);
  }
  const html = (await b.send("/dashboard/usage")).text;
  const to = cell(html, "To");
  assert.equal(to.length, 20);
  assert.equal(to[0], "team21@example.org");
  assert.equal(to[19], "team2@example.org");
  // Raised at 09:58: shown to the minute.
  assert.equal(cell(html, "Raised")[0], "2030-05-10 09:58 UTC");
});

Deno.test("usage page: the chart marks today's bar and ends on the period's last day; times are shown to the minute", async () => {
  const clock = new ManualClock(START);
  await using s = await startServer({ signup: "open", clock });
  const { b } = await signedUp(s, "chart-days@example.com");
  clock.advance(3 * DAY + 5 * 3600_000); // May 13, 14:37
  const html = (await b.send("/dashboard/usage")).text;
  const bars = [...html.matchAll(/<rect class="([^"]+)"[^>]*data-day="([^"]+)"/g)]
    .map((m) => [m[1], m[2]]);
  assert.equal(bars.length, 31, "May 10 to June 9, both included");
  assert.equal(bars[0][1], "2030-05-10");
  assert.equal(bars.at(-1)![1], "2030-06-09", "the period ends June 9 09:37");
  assert.deepEqual(bars.filter(([c]) => c === "bar today").map(([, d]) => d), ["2030-05-13"]);
  assert.match(html, /<dt>Period started<\/dt><dd>2030-05-10 09:37 UTC<\/dd>/);
  assert.match(html, /<dt>Credits reset<\/dt><dd>2030-06-09 09:37 UTC<\/dd>/);
});
