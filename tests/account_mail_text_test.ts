/**
 * The words of the dashboard's account mails as the mailbox receives them (real server, real
 * SMTP): the link life the sign-up mail states is the one its link has, and the "already
 * registered" notice links to the sign-in page on PUBLIC_URL.
 */
import assert from "node:assert/strict";
import { ManualClock, startServer } from "./test_server.ts";
import { eventually, startSmtpSink } from "./smtp_sink.ts";
import { browser, linkIn, PASSWORD } from "./dashboard_client.ts";

const HOUR = 3600 * 1000;

/** The mail's text with quoted-printable soft line breaks undone. */
const textOf = (raw: string) => raw.replace(/=\r?\n/g, "");

async function signUp(url: string, email: string) {
  const b = browser(url);
  const page = await b.send("/dashboard/signup");
  const r = await b.send("/dashboard/signup", {
    form: { _csrf: page.csrf, email, password: PASSWORD },
  });
  assert.equal(r.status, 200);
  return b;
}

Deno.test("the sign-up mail states the link's real life: 24 hours, working just before and not after", async () => {
  await using smtp = await startSmtpSink();
  const clock = new ManualClock();
  await using s = await startServer({
    signup: "verify",
    smtp: { url: smtp.url },
    clock,
    publicUrl: "https://shelf.example",
  });
  await signUp(s.url, "early@example.com");
  await signUp(s.url, "late@example.com");
  await eventually("the two confirmation mails", () => smtp.received.length === 2);
  const mail = (to: string) => smtp.received.find((m) => m.to.includes(to))!;
  for (const m of smtp.received) {
    assert.match(textOf(m.raw), /within 24 hours/);
    assert.doesNotMatch(textOf(m.raw), /within (?!24 )\d+ hours/);
  }
  const early = linkIn(mail("early@example.com").raw, "/dashboard/verify");
  const late = linkIn(mail("late@example.com").raw, "/dashboard/verify");
  clock.advance(24 * HOUR - 60_000);
  const v = await browser(s.url).send(`/dashboard/verify?token=${early}`);
  assert.equal(v.status, 200, "still valid a minute before the stated 24 hours");
  assert.match(v.text, /name="password"/);
  clock.advance(60_000 + 1);
  assert.equal(
    (await browser(s.url).send(`/dashboard/verify?token=${late}`)).status,
    400,
    "expired once the stated 24 hours are past",
  );
});

Deno.test("signing up an address that has an account mails it a sign-in link on PUBLIC_URL", async () => {
  await using smtp = await startSmtpSink();
  await using s = await startServer({
    signup: "verify",
    smtp: { url: smtp.url },
    publicUrl: "https://shelf.example",
  });
  const email = "owner@example.com";
  const b = await signUp(s.url, email);
  await eventually("the confirmation mail", () => smtp.received.length === 1);
  const token = linkIn(smtp.received[0].raw, "/dashboard/verify");
  const v = await b.send(`/dashboard/verify?token=${token}`);
  const done = await b.send("/dashboard/verify", {
    form: { _csrf: v.csrf, token, password: "chosen on confirming" },
  });
  assert.equal(done.status, 303);
  assert.ok(await s.accounts.idByEmail(email));

  await signUp(s.url, email);
  await eventually("the notice", () => smtp.received.length === 2);
  const notice = smtp.received[1];
  assert.match(notice.subject, /Your Shelf account/);
  const text = textOf(notice.raw);
  assert.match(text, /Sign in: https:\/\/shelf\.example\/dashboard\/signin(\r?\n|$)/);
  assert.doesNotMatch(text, /Sign in: \/dashboard/, "never a link without a host");
  assert.match(text, /https:\/\/shelf\.example\/dashboard\/reset/);
});
