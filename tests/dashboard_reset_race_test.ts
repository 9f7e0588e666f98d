/**
 * Links and sessions spent for good: of reset links raced against each other one sets the
 * password, the others are refused; a used reset or sign-up link is gone from the store; and a
 * password change deletes the session it was made from.
 */
import assert from "node:assert/strict";
import { startServer } from "./test_server.ts";
import { eventually, startSmtpSink } from "./smtp_sink.ts";
import {
  askReset,
  browser,
  linkIn,
  PASSWORD,
  resetWith,
  signIn,
  signUpOpen,
} from "./dashboard_client.ts";
import { ACCOUNT_MAIL_LIMIT } from "../metering/account_mail_limit.ts";
import { KV } from "../metering/kv_layout.ts";
import { hashKey } from "../metering/api_key.ts";

Deno.test("reset links used at the same time: one sets the password, the others are refused, and the used link is gone", async () => {
  await using smtp = await startSmtpSink();
  await using s = await startServer({ signup: "open", smtp: { url: smtp.url } });
  const email = "raced@example.com";
  await signUpOpen(browser(s.url), email);
  // As many "forgot" mails as an account gets, each with a link of the same password.
  const tokens: string[] = [];
  for (let n = 1; n <= ACCOUNT_MAIL_LIMIT; n++) tokens.push(await askReset(s.url, smtp, email, n));
  const forms = await Promise.all(tokens.map(async (token) => {
    const b = browser(s.url);
    const page = await b.send(`/dashboard/reset?token=${token}`);
    assert.equal(page.status, 200);
    return { b, token, csrf: page.csrf };
  }));
  const statuses = await Promise.all(
    forms.map(async ({ b, token, csrf }, i) =>
      (await b.send("/dashboard/reset", {
        form: { _csrf: csrf, token, password: `password set by link ${i}` },
      })).status
    ),
  );
  assert.equal(statuses.filter((st) => st === 303).length, 1, `one reset: ${statuses}`);
  assert.equal(statuses.filter((st) => st === 400).length, statuses.length - 1, `${statuses}`);
  const winner = statuses.indexOf(303);
  for (let i = 0; i < tokens.length; i++) {
    assert.equal(
      (await signIn(browser(s.url), email, `password set by link ${i}`)).status,
      i === winner ? 303 : 401,
      `link ${i}'s password`,
    );
  }
  // The link that set the password is spent in the store, not only voided by the new password.
  const spent = await s.kv.get(KV.emailToken("reset", hashKey(tokens[winner])));
  assert.equal(spent.value, null, "the used reset link's entry is deleted");
});

Deno.test("a used reset link's store entry is deleted with the reset", async () => {
  await using smtp = await startSmtpSink();
  await using s = await startServer({ signup: "open", smtp: { url: smtp.url } });
  const email = "spent@example.com";
  await signUpOpen(browser(s.url), email);
  const token = await askReset(s.url, smtp, email, 1);
  const key = KV.emailToken("reset", hashKey(token));
  assert.notEqual((await s.kv.get(key)).value, null, "stored while unused");
  assert.equal(await resetWith(s.url, token, "a brand new password"), 303);
  assert.equal((await s.kv.get(key)).value, null);
});

Deno.test("SIGNUP=verify: the confirmation link is deleted from the store by the commit that creates the account", async () => {
  await using smtp = await startSmtpSink();
  await using s = await startServer({ signup: "verify", smtp: { url: smtp.url } });
  const email = "confirmed@example.com";
  const b = browser(s.url);
  const page = await b.send("/dashboard/signup");
  await b.send("/dashboard/signup", { form: { _csrf: page.csrf, email, password: PASSWORD } });
  await eventually("the confirmation mail", () => smtp.received.length === 1);
  const token = linkIn(smtp.received[0].raw, "/dashboard/verify");
  const key = KV.emailToken("signup", hashKey(token));
  assert.notEqual((await s.kv.get(key)).value, null, "stored while unused");
  const v = await b.send(`/dashboard/verify?token=${token}`);
  const done = await b.send("/dashboard/verify", {
    form: { _csrf: v.csrf, token, password: "chosen on confirming" },
  });
  assert.equal(done.status, 303);
  assert.ok(await s.accounts.idByEmail(email));
  assert.equal((await s.kv.get(key)).value, null, "spent: it can create no account later");
});

Deno.test("changing the password deletes the session it was changed from, in the store too", async () => {
  await using s = await startServer({ signup: "open" });
  const email = "changer@example.com";
  const b = browser(s.url);
  await signUpOpen(b, email);
  const id = (await s.accounts.idByEmail(email))!;
  const sessionCookie = () =>
    [...b.jar].find(([k]) => k === "shelf_session" || k === "__Host-shelf_session")?.[1];
  const before = sessionCookie();
  assert.ok(before, "signed in");
  assert.notEqual((await s.kv.get(KV.session(hashKey(before)))).value, null);
  const page = await b.send("/dashboard/password");
  const changed = await b.send("/dashboard/password", {
    form: { _csrf: page.csrf, current: PASSWORD, password: "a changed password" },
  });
  assert.equal(changed.status, 303);
  const after = sessionCookie();
  assert.ok(after && after !== before, "a fresh session");
  assert.equal((await s.kv.get(KV.session(hashKey(before)))).value, null, "old session deleted");
  assert.equal(
    (await s.kv.get(KV.accountSession(id, hashKey(before)))).value,
    null,
    "and its index entry",
  );
  const left = await Array.fromAsync(s.kv.list({ prefix: KV.accountSessions(id) }));
  assert.equal(left.length, 1, "only the fresh session is left");
  assert.equal((await b.send("/dashboard/keys")).status, 200, "signed in with the new one");
});
