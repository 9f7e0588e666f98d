import assert from "node:assert/strict";
import { burst, count, startServer } from "./test_server.ts";
import { eventually, startSmtpSink } from "./smtp_sink.ts";
import { ManualClock } from "../metering/clock.ts";
import { listAlerts } from "../metering/alerts.ts";
import { ApiError } from "../core/api_error.ts";
import { removeKvFiles } from "../core/kv_files.ts";
import { KV } from "../metering/kv_layout.ts";
import { NOT_MAILABLE } from "../mail/smtp.ts";
import { ALERTS_FROM, bulk, FAST_ALERTS, OFFERS } from "./bulk_plan.ts";

/** Lets the loop run a few more rounds, so that a second (wrong) mail would have arrived. */
const settle = () => new Promise((r) => setTimeout(r, 400));

Deno.test("alerts: one 80% and one 100% mail by SMTP when a burst of calls crosses both", async () => {
  await using smtp = await startSmtpSink();
  await using s = await startServer({
    plans: bulk(20),
    smtp: { url: smtp.url, from: ALERTS_FROM, timing: FAST_ALERTS },
  });
  const { id, key } = await s.account("bulk");
  const email = (await s.accounts.get(id)).email;

  const statuses = await burst(40, () => s.get(OFFERS, key));
  assert.equal(count(statuses, 200), 20);
  await eventually("two alert mails", () => smtp.received.length >= 2);
  await settle();
  assert.equal(smtp.received.length, 2);
  const subjects = smtp.received.map((m) => m.subject).sort();
  assert.deepEqual(subjects, [
    "Shelf: 80% of your monthly credits used",
    "Shelf: your monthly credits are used up (100%)",
  ]);
  for (const m of smtp.received) {
    assert.deepEqual(m.to, [email]);
    assert.equal(m.from, "alerts@shelf.test");
    assert.match(m.raw, /Plan: bulk/);
  }
  const alerts = await listAlerts(s.kv, id);
  assert.deepEqual(alerts.map((a) => [a.threshold, a.status]).sort(), [[100, "delivered"], [
    80,
    "delivered",
  ]]);
  assert.equal(
    [...(await Array.fromAsync(s.kv.list({ prefix: ["alert_outbox"] })))].length,
    0,
    "the outbox is empty",
  );
});

Deno.test("alerts: two accounts whose periods began in the same millisecond each get their own 80% and 100% mails (probe HN)", async () => {
  await using smtp = await startSmtpSink();
  // Accounts an operator creates together begin their periods together.
  const clock = new ManualClock(Date.UTC(2026, 10, 2, 9, 0, 0, 0));
  await using s = await startServer({
    plans: bulk(10),
    clock,
    smtp: { url: smtp.url, from: ALERTS_FROM, timing: FAST_ALERTS },
  });
  const a = await s.account("bulk");
  const b = await s.account("bulk");
  const [ra, rb] = [await s.accounts.get(a.id), await s.accounts.get(b.id)];
  assert.equal(ra.plan_started_at, rb.plan_started_at);
  for (const { key } of [a, b]) {
    assert.equal(count(await burst(10, () => s.get(OFFERS, key)), 200), 10);
  }
  await eventually("four alert mails", () => smtp.received.length >= 4);
  await settle();
  for (const r of [ra, rb]) {
    const to = smtp.received.filter((m) => m.to.includes(r.email)).map((m) => m.subject).sort();
    assert.deepEqual(to, [
      "Shelf: 80% of your monthly credits used",
      "Shelf: your monthly credits are used up (100%)",
    ], r.email);
    const alerts = await listAlerts(s.kv, r.id);
    assert.deepEqual(alerts.map((x) => x.status), ["delivered", "delivered"]);
  }
  assert.equal(smtp.received.length, 4);
  assert.equal((await Array.fromAsync(s.kv.list({ prefix: ["alert_outbox"] }))).length, 0);
});

Deno.test("alerts: refunds around the threshold and later calls do not send the 80% mail again", async () => {
  await using smtp = await startSmtpSink();
  await using s = await startServer({
    plans: bulk(10),
    smtp: { url: smtp.url, from: ALERTS_FROM, timing: FAST_ALERTS },
  });
  const { key } = await s.account("bulk");
  for (let i = 0; i < 7; i++) assert.equal((await burst(1, () => s.get(OFFERS, key)))[0], 200);
  s.source.failWith = new ApiError(502, "upstream_error", "down");
  for (let i = 0; i < 5; i++) assert.equal((await burst(1, () => s.get(OFFERS, key)))[0], 502); // 7 → 8 → 7
  s.source.failWith = null;
  assert.equal((await burst(1, () => s.get(OFFERS, key)))[0], 200);
  await eventually("the 80% mail", () => smtp.received.length >= 1);
  await settle();
  assert.equal(smtp.received.length, 1);
  assert.match(smtp.received[0].subject, /80%/);
});

Deno.test("alerts: an undelivered alert survives a restart and is delivered once by the next process", async () => {
  await using smtp = await startSmtpSink();
  const kvPath = await Deno.makeTempFile({ suffix: ".kv" });
  try {
    smtp.failing = true;
    let account: { id: string; key: string };
    {
      await using a = await startServer({
        kvPath,
        plans: bulk(10),
        smtp: { url: smtp.url, from: ALERTS_FROM, timing: FAST_ALERTS },
      });
      account = await a.account("bulk");
      assert.deepEqual(await burst(8, () => a.get(OFFERS, account.key)), Array(8).fill(200));
      await eventually("a refused attempt", () => smtp.refused >= 2);
      const [pending] = await listAlerts(a.kv, account.id);
      assert.equal(pending.status, "pending");
      assert.ok(pending.attempts >= 1);
      assert.match(pending.last_error ?? "", /451/);
    } // the first server stops here, its alert undelivered
    smtp.failing = false;
    await using b = await startServer({
      kvPath,
      plans: bulk(10),
      smtp: { url: smtp.url, from: ALERTS_FROM, timing: FAST_ALERTS },
    });
    await eventually("the 80% mail after the restart", () => smtp.received.length >= 1);
    assert.deepEqual(await burst(2, () => b.get(OFFERS, account.key)), [200, 200]);
    await eventually("the 100% mail", () => smtp.received.length >= 2);
    await settle();
    assert.deepEqual(smtp.received.map((m) => m.subject), [
      "Shelf: 80% of your monthly credits used",
      "Shelf: your monthly credits are used up (100%)",
    ]);
    assert.deepEqual((await listAlerts(b.kv, account.id)).map((a) => a.status), [
      "delivered",
      "delivered",
    ]);
  } finally {
    await removeKvFiles(kvPath);
  }
});

Deno.test("alerts: two processes on one store send each alert once", async () => {
  await using smtp = await startSmtpSink();
  const kvPath = await Deno.makeTempFile({ suffix: ".kv" });
  try {
    await using a = await startServer({
      kvPath,
      plans: bulk(10),
      smtp: { url: smtp.url, from: ALERTS_FROM, timing: FAST_ALERTS },
    });
    await using b = await startServer({
      kvPath,
      plans: bulk(10),
      smtp: { url: smtp.url, from: ALERTS_FROM, timing: FAST_ALERTS },
    });
    const { key } = await a.account("bulk");
    await Promise.all([burst(10, () => a.get(OFFERS, key)), burst(10, () => b.get(OFFERS, key))]);
    await eventually("two alert mails", () => smtp.received.length >= 2);
    await settle();
    assert.equal(smtp.received.length, 2);
  } finally {
    await removeKvFiles(kvPath);
  }
});

Deno.test("alerts: without SMTP_URL they are kept in the store; turned off, none is written", async () => {
  await using s = await startServer({ plans: bulk(10) });
  const on = await s.account("bulk");
  const off = await s.account("bulk");
  // As the dashboard's confirmation link sets it: the address, confirmed.
  const ops = "ops@example.com";
  await s.accounts.updateAlerts(off.id, { at80: false, email: ops, confirmed: ops });
  // As a settings form saved it while no mail server was set: kept, but not confirmed, so the
  // alerts go to the account's own address (they went to it, once a mail server was set; probe AH).
  const unconfirmed = await s.account("bulk");
  await s.accounts.updateAlerts(unconfirmed.id, { email: "victim@example.com" });
  // Not a host of the operator's network (probe EV).
  for (const email of ["root@localhost", "b@0x7f000001", "a@printer.local"]) {
    await assert.rejects(
      s.accounts.updateAlerts(unconfirmed.id, { email }),
      /address on the internet/,
      email,
    );
  }
  for (const k of [on.key, off.key, unconfirmed.key]) {
    assert.equal(count(await burst(10, () => s.get(OFFERS, k)), 200), 10);
  }
  const kept = await listAlerts(s.kv, on.id);
  assert.deepEqual(kept.map((a) => [a.threshold, a.status]), [[100, "pending"], [80, "pending"]]);
  const fewer = await listAlerts(s.kv, off.id);
  assert.deepEqual(fewer.map((a) => [a.threshold, a.to]), [[100, ops]]);
  const own = (await s.accounts.get(unconfirmed.id)).email;
  const toOwn = await listAlerts(s.kv, unconfirmed.id);
  assert.deepEqual(toOwn.map((a) => a.to), [own, own]);
});

Deno.test("the per-day counters add up to the period's usage, refunds included", async () => {
  await using s = await startServer({ plans: bulk(100) });
  const { id, key } = await s.account("bulk");
  assert.equal(count(await burst(12, () => s.get(OFFERS, key)), 200), 12);
  s.source.failWith = new ApiError(502, "upstream_error", "down");
  await burst(5, () => s.get(OFFERS, key));
  const a = await s.accounts.get(id);
  assert.equal(a.used, 12);
  assert.deepEqual(Object.values(a.daily ?? {}), [12]);
});

Deno.test("alerts: one whose credit period ended long before a mail server took it is not sent", async () => {
  await using smtp = await startSmtpSink();
  // The meter's clock 40 days back: the alerts raised now belong to a period that ended 10 days ago.
  const { ManualClock } = await import("../metering/clock.ts");
  const clock = new ManualClock(Date.now() - 40 * 24 * 3600 * 1000);
  await using s = await startServer({
    plans: bulk(2),
    clock,
    smtp: { url: smtp.url, from: ALERTS_FROM, timing: FAST_ALERTS },
  });
  const { id, key } = await s.account("bulk");
  assert.equal(count(await burst(2, () => s.get(OFFERS, key)), 200), 2);
  await eventually(
    "the alerts taken out of the outbox",
    async () => (await listAlerts(s.kv, id)).every((a) => a.last_error?.startsWith("not sent")),
  );
  await settle();
  assert.equal(smtp.received.length, 0, "no mail about a period long over");
});

Deno.test("alerts: an address stored before addresses had to be public is not handed to the relay (probe EV)", async () => {
  await using smtp = await startSmtpSink();
  await using s = await startServer({
    plans: bulk(20),
    smtp: { url: smtp.url, from: ALERTS_FROM, timing: FAST_ALERTS },
  });
  const { id, key } = await s.account("bulk");
  // As an earlier version stored it: root@localhost, which sign-up now refuses.
  const entry = await s.kv.get<{ email: string }>(KV.account(id));
  await s.kv.set(KV.account(id), { ...entry.value!, email: "root@localhost" });
  s.deps.meter.forget(id);

  const statuses = await burst(40, () => s.get(OFFERS, key));
  assert.equal(count(statuses, 200), 20);
  await eventually("both alerts settled", async () => {
    const alerts = await listAlerts(s.kv, id);
    return alerts.length === 2 && alerts.every((a) => a.last_error === NOT_MAILABLE);
  });
  await settle();
  assert.equal(smtp.received.length, 0, "nothing reached the mail server");
  assert.equal(
    [...(await Array.fromAsync(s.kv.list({ prefix: ["alert_outbox"] })))].length,
    0,
    "nor waits to",
  );
});
