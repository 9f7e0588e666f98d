/**
 * What a usage alert says and how it is kept: the figures and reset time in the mail (also for an
 * alert raised days into its period, which the delivery loop's lapse check must still send), the
 * alert's id and attempt count once delivered, the order of the 80% and 100% mails found in one
 * pass, orphan outbox entries, and the bound on a stored error. Real server, real KV file, a real
 * SMTP server on loopback (tests/smtp_sink.ts).
 */
import assert from "node:assert/strict";
import { burst, count, ManualClock, startServer } from "./test_server.ts";
import { eventually, startSmtpSink } from "./smtp_sink.ts";
import { listAlerts, markFailed } from "../metering/alerts.ts";
import { KV } from "../metering/kv_layout.ts";
import { removeKvFiles } from "../core/kv_files.ts";
import { ALERTS_FROM, bulk, FAST_ALERTS, OFFERS } from "./bulk_plan.ts";

const DAY = 24 * 3600 * 1000;
const PERIOD = 30 * DAY;

/** Lets the loop run a few more rounds, so that a second (wrong) mail would have arrived. */
const settle = () => new Promise((r) => setTimeout(r, 400));

/** As the mail shows a time: "2026-11-27 19:06 UTC". */
const shown = (t: number) => new Date(t).toISOString().replace("T", " ").slice(0, 16) + " UTC";

/** Spends `n` credits one call at a time. */
async function spend(s: { get(p: string, k: string): Promise<Response> }, key: string, n: number) {
  for (let i = 0; i < n; i++) assert.equal((await burst(1, () => s.get(OFFERS, key)))[0], 200);
}

/** An account created 10 days ago (meter's clock), the clock then brought to the present. */
async function tenDaysIntoPeriod(smtpUrl: string) {
  const clock = new ManualClock(Date.now() - 10 * DAY);
  const s = await startServer({
    plans: bulk(10),
    clock,
    smtp: { url: smtpUrl, from: ALERTS_FROM, timing: FAST_ALERTS },
  });
  const account = await s.account("bulk");
  const periodStart = (await s.accounts.get(account.id)).plan_started_at;
  clock.advance(10 * DAY);
  return { s, account, periodStart };
}

Deno.test("alert mail: the 80% mail says used 8 of its 10 credits and the period's end, though raised 10 days into the period", async () => {
  await using smtp = await startSmtpSink();
  const { s, account, periodStart } = await tenDaysIntoPeriod(smtp.url);
  await using _s = s;
  await spend(s, account.key, 8);
  await eventually("the 80% mail", () => smtp.received.length >= 1, 5_000);
  await settle();
  assert.equal(smtp.received.length, 1);
  const [mail] = smtp.received;
  assert.equal(mail.subject, "Shelf: 80% of your monthly credits used");
  assert.match(
    mail.raw,
    /Your account has used 8 of its 10 credits this period \(80% or more\)\./,
  );
  assert.ok(
    mail.raw.includes(`Credits reset: ${shown(periodStart + PERIOD)}`),
    `the reset time is the period's end, ${shown(periodStart + PERIOD)}:\n${mail.raw}`,
  );

  await spend(s, account.key, 2);
  await eventually("the 100% mail", () => smtp.received.length >= 2, 5_000);
  assert.match(smtp.received[1].raw, /Your account has used all 10 credits of this period\./);
});

Deno.test("alerts: a delivered alert is kept as alr_<period start>_<threshold>_<account> with one attempt", async () => {
  await using smtp = await startSmtpSink();
  const { s, account, periodStart } = await tenDaysIntoPeriod(smtp.url);
  await using _s = s;
  await spend(s, account.key, 8);
  await eventually("the 80% mail", () => smtp.received.length >= 1, 5_000);
  await eventually(
    "the alert marked delivered",
    async () => (await listAlerts(s.kv, account.id))[0]?.status === "delivered",
    5_000,
  );
  const [alert] = await listAlerts(s.kv, account.id);
  const id = `alr_${String(periodStart).padStart(15, "0")}_080_${account.id}`;
  assert.equal(alert.id, id);
  assert.equal((await s.kv.get(KV.alert(account.id, id))).value !== null, true);
  assert.equal(alert.period_start, periodStart);
  assert.equal(alert.period_end, periodStart + PERIOD);
  assert.equal(alert.attempts, 1, "delivered on the first try");
  assert.equal(alert.last_error, null);
});

Deno.test("alerts: when one pass finds both the 80% and the 100% alert, the 80% mail is sent first", async () => {
  await using smtp = await startSmtpSink();
  const kvPath = await Deno.makeTempFile({ suffix: ".kv" });
  try {
    let id: string;
    {
      // No mail server yet: both alerts wait in the outbox.
      await using a = await startServer({ kvPath, plans: bulk(10) });
      const account = await a.account("bulk");
      id = account.id;
      assert.equal(count(await burst(10, () => a.get(OFFERS, account.key)), 200), 10);
      assert.equal((await Array.fromAsync(a.kv.list({ prefix: KV.outbox }))).length, 2);
    }
    await using b = await startServer({
      kvPath,
      plans: bulk(10),
      smtp: { url: smtp.url, from: ALERTS_FROM, timing: FAST_ALERTS },
    });
    await eventually("two alert mails", () => smtp.received.length >= 2, 5_000);
    await settle();
    assert.deepEqual(smtp.received.map((m) => m.subject), [
      "Shelf: 80% of your monthly credits used",
      "Shelf: your monthly credits are used up (100%)",
    ]);
    assert.deepEqual((await listAlerts(b.kv, id)).map((x) => x.status), [
      "delivered",
      "delivered",
    ]);
  } finally {
    await removeKvFiles(kvPath);
  }
});

Deno.test("alerts: an outbox entry whose alert record is gone is dropped by the delivery loop, and nothing is sent for it", async () => {
  await using smtp = await startSmtpSink();
  await using s = await startServer({
    plans: bulk(10),
    smtp: { url: smtp.url, from: ALERTS_FROM, timing: FAST_ALERTS },
  });
  const { id, key } = await s.account("bulk");
  // As a restore holding only the outbox entry would leave it; of an earlier period, so that the
  // loop comes to it before the real alert below.
  const orphan = `alr_${String(Date.now() - PERIOD).padStart(15, "0")}_080_${id}`;
  await s.kv.set(KV.outboxEntry(orphan), id);
  // A real alert after it, so that the loop has certainly passed over the orphan.
  await spend(s, key, 8);
  await eventually("the real 80% mail", () => smtp.received.length >= 1, 5_000);
  await eventually(
    "the orphan entry deleted",
    async () => (await s.kv.get(KV.outboxEntry(orphan))).value === null,
    3_000,
  );
  await settle();
  assert.equal(smtp.received.length, 1);
  assert.deepEqual(await Array.fromAsync(s.kv.list({ prefix: KV.outbox })), []);
});

Deno.test("alerts: a failed attempt's error is stored cut to 300 characters", async () => {
  // The delivery loop stores only short phrases of its own (probe DE); the bound is markFailed's.
  await using s = await startServer({ plans: bulk(10) });
  const { id, key } = await s.account("bulk");
  await spend(s, key, 8);
  const [alert] = await listAlerts(s.kv, id);
  assert.equal(alert.status, "pending");
  const long = "451 " + "x".repeat(1_000);
  await markFailed(s.kv, alert, long, Date.now() + 1_000);
  const [failed] = await listAlerts(s.kv, id);
  assert.equal(failed.last_error, long.slice(0, 300));
  assert.equal(failed.attempts, 1);
});
