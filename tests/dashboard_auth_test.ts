/**
 * Dashboard accounts as an outsider meets them (issues 13.4, 13.5, 13.9, 13.10, 13.16, 18.8–18.10):
 * sign-up modes, the mailed confirmation and reset links, password change, the KV lockout, the
 * Secure flag, and the refusals of forged forms. Real server on loopback, real KV file, real SMTP.
 */
import { report } from "./proof/figures.ts";
import { Plans } from "../metering/plans.ts";
import assert from "node:assert/strict";
import { ManualClock, startServer } from "./test_server.ts";
import { eventually, startSmtpSink } from "./smtp_sink.ts";
import {
  askReset,
  type Browser,
  browser,
  linkIn,
  PASSWORD,
  resetWith,
  signedUpAndIn,
  signIn,
  signUpOpen,
  withAlertsOwner,
} from "./dashboard_client.ts";
import { loadConfig } from "../config.ts";
import { SIGNIN_WINDOW_MS } from "../metering/signin_lockout.ts";
import { NEW_DEVICES_PER_DAY } from "../metering/sign_in_devices.ts";
import { SESSION_MS } from "../metering/sessions.ts";
import { DASHBOARD_PER_SECOND } from "../routes/dashboard/mod.tsx";
import {
  ACCOUNT_MAIL_LIMIT,
  ACCOUNT_MAIL_WINDOW_MS,
  CLIENT_MAIL_LIMIT,
} from "../metering/account_mail_limit.ts";
import { removeKvFiles } from "../core/kv_files.ts";
import { KV } from "../metering/kv_layout.ts";
import type { AccountState } from "../metering/account_state.ts";
import { SIGNUP_WINDOW_MS } from "../metering/signup_limit.ts";
import { NETWORK_FACTOR } from "../metering/window_slots.ts";
import { runAdmin } from "../cli/admin.ts";
import { builtinPlans } from "../metering/plans.ts";

// The limits as the README documents them, not imported: a test that took its figure from the
// constant under test passed whatever the constant became.
/** "ten failed sign-ins for an email within 15 minutes lock it". */
const SIGNIN_LIMIT = 10;
/** "One client ... may make at most 100 sign-in attempts in 15 minutes". */
const CLIENT_SIGNIN_LIMIT = 100;
/** Sign-up "at most 20 an hour per client". */
const CLIENT_SIGNUP_LIMIT = 20;

/** Signs a browser out; its device cookie stays. */
async function signOut(b: Browser) {
  const page = await b.send("/dashboard/keys");
  assert.equal((await b.send("/dashboard/signout", { form: { _csrf: page.csrf } })).status, 303);
  assert.equal((await b.send("/dashboard/keys")).status, 303, "signed out");
}

/** SIGNIN_LIMIT wrong passwords for `email`, each from `from()`, each answered 401. */
async function wrongSignIns(url: string, email: string, from: () => Browser = () => browser(url)) {
  for (let i = 0; i < SIGNIN_LIMIT; i++) {
    assert.equal((await signIn(from(), email, "wrong password!")).status, 401);
  }
}

/** An open sign-up for `email`, and its owner's browser that signed in once (a known device). */
async function knownBrowser(url: string, email: string): Promise<Browser> {
  const owner = await signedUpAndIn(url, email);
  await signOut(owner);
  return owner;
}

Deno.test("TRUST_PROXY: unset or 0 trusts no proxy, 1 one, a number up to 10 a chain; anything else stops start-up", () => {
  const env = (vars: Record<string, string>) => ({ get: (k: string) => vars[k] });
  assert.equal(loadConfig(env({})).trustProxy, 0);
  assert.equal(loadConfig(env({ TRUST_PROXY: "0" })).trustProxy, 0);
  assert.equal(loadConfig(env({ TRUST_PROXY: "1" })).trustProxy, 1);
  assert.equal(loadConfig(env({ TRUST_PROXY: "3" })).trustProxy, 3);
  for (const v of ["yes", "true", "-1", "1.5", "11", " 1"]) {
    assert.throws(() => loadConfig(env({ TRUST_PROXY: v })), /'TRUST_PROXY'/, v);
  }
});

Deno.test("SIGNUP defaults: closed without SMTP_URL, verify with it; verify without a mail server refuses to start", () => {
  const env = (vars: Record<string, string>) => ({ get: (k: string) => vars[k] });
  assert.equal(loadConfig(env({})).signup, "closed");
  assert.equal(loadConfig(env({ SMTP_URL: "smtp://127.0.0.1:25" })).signup, "verify");
  assert.equal(loadConfig(env({ SIGNUP: "open" })).signup, "open");
  assert.throws(() => loadConfig(env({ SIGNUP: "verify" })), /SMTP_URL/);
  assert.throws(() => loadConfig(env({ SIGNUP: "yes" })), /SIGNUP/);
});

Deno.test("SIGNUP=verify: a confirmation link opened after the address got an account says it is void (probe GL)", async () => {
  await using smtp = await startSmtpSink();
  await using s = await startServer({ signup: "verify", smtp: { url: smtp.url } });
  const b = browser(s.url);
  const email = "late@example.com";
  const page = await b.send("/dashboard/signup");
  await b.send("/dashboard/signup", { form: { _csrf: page.csrf, email, password: PASSWORD } });
  await eventually("the confirmation mail", () => smtp.received.length === 1);
  const token = linkIn(smtp.received[0].raw, "/dashboard/verify");
  await s.accounts.create(email, "free"); // the operator made it meanwhile
  const v = await b.send(`/dashboard/verify?token=${token}`);
  // It showed the form, then refused the password typed into it.
  assert.equal(v.status, 400);
  assert.doesNotMatch(v.text, /name="password"/);
});

Deno.test("SIGNUP=verify: no account (no credits, no keys) until the mailed link is used, once, before it expires", async () => {
  await using smtp = await startSmtpSink();
  const clock = new ManualClock();
  await using s = await startServer({
    signup: "verify",
    smtp: { url: smtp.url },
    clock,
    publicUrl: "https://shelf.example",
  });
  const b = browser(s.url);
  const email = "new@example.com";
  const page = await b.send("/dashboard/signup");
  const r = await b.send("/dashboard/signup", {
    form: { _csrf: page.csrf, email, password: PASSWORD },
  });
  assert.equal(r.status, 200);
  assert.match(r.text, /Check your mail/);
  assert.equal(b.jar.has("__Host-shelf_session"), false, "not signed in");
  assert.equal(b.jar.has("shelf_session"), false, "not signed in");
  assert.equal(await s.accounts.idByEmail(email), null, "no account before confirmation");
  assert.equal(
    (await signIn(browser(s.url), email)).status,
    401,
    "cannot sign in before confirmation",
  );

  await eventually("the confirmation mail", () => smtp.received.length === 1);
  const token = linkIn(smtp.received[0].raw, "/dashboard/verify");
  assert.match(
    smtp.received[0].raw.replace(/=\r?\n/g, ""),
    /https:\/\/shelf\.example\/dashboard\/verify/,
    "link on PUBLIC_URL",
  );
  const v = await b.send(`/dashboard/verify?token=${token}`);
  assert.equal(v.status, 200, "opening the link (a mail scanner may) creates nothing");
  assert.match(v.text, /name="password"/, "the password is chosen on confirming");
  assert.equal(await s.accounts.idByEmail(email), null);
  const short = await b.send("/dashboard/verify", {
    form: { _csrf: v.csrf, token, password: "short" },
  });
  assert.equal(short.status, 422, "a too short password is refused, the link kept");
  assert.equal(await s.accounts.idByEmail(email), null);
  const done = await b.send("/dashboard/verify", {
    form: { _csrf: v.csrf, token, password: "chosen on confirming" },
  });
  assert.equal(done.status, 303);
  assert.equal(done.headers.get("location"), "/dashboard/keys");
  const id = await s.accounts.idByEmail(email);
  assert.ok(id, "the account exists once confirmed");
  assert.equal((await s.accounts.get(id!)).plan, "free");

  const again = await browser(s.url).send(`/dashboard/verify?token=${token}`);
  assert.equal(again.status, 400, "the link works once");
  assert.equal(
    (await signIn(browser(s.url), email)).status,
    401,
    "a password typed into the sign-up form is not the account's",
  );
  assert.equal(
    (await signIn(browser(s.url), email, "chosen on confirming")).status,
    303,
    "the password chosen on confirming works",
  );

  // A second sign-up's link, used after 24 hours.
  const late = browser(s.url);
  const p2 = await late.send("/dashboard/signup");
  await late.send("/dashboard/signup", {
    form: { _csrf: p2.csrf, email: "late@example.com", password: PASSWORD },
  });
  await eventually("the second confirmation mail", () => smtp.received.length === 2);
  const lateToken = linkIn(smtp.received[1].raw, "/dashboard/verify");
  clock.advance(24 * 3600 * 1000 + 1);
  assert.equal((await late.send(`/dashboard/verify?token=${lateToken}`)).status, 400, "expired");
  assert.equal(await s.accounts.idByEmail("late@example.com"), null);
});

Deno.test("SIGNUP=verify: whoever signs up someone else's address gets no say in its password", async () => {
  await using smtp = await startSmtpSink();
  await using s = await startServer({ signup: "verify", smtp: { url: smtp.url } });
  const email = "owner@example.com";
  // Someone else asks for an account for the owner's address, with a password of their own.
  const other = browser(s.url);
  const page = await other.send("/dashboard/signup");
  await other.send("/dashboard/signup", {
    form: { _csrf: page.csrf, email, password: "the other one's pick" },
  });
  await eventually("the confirmation mail", () => smtp.received.length === 1);
  // The owner, finding the mail, confirms it with a password of their own.
  const owner = browser(s.url);
  const token = linkIn(smtp.received[0].raw, "/dashboard/verify");
  const v = await owner.send(`/dashboard/verify?token=${token}`);
  const done = await owner.send("/dashboard/verify", {
    form: { _csrf: v.csrf, token, password: "the owner's own pick" },
  });
  assert.equal(done.status, 303);
  assert.equal((await signIn(browser(s.url), email, "the other one's pick")).status, 401);
  assert.equal((await signIn(browser(s.url), email, "the owner's own pick")).status, 303);
});

Deno.test("the dashboard mails no private host: a sign-up or an alert address on one is refused in the form (probes EV, FB)", async () => {
  await using smtp = await startSmtpSink();
  await using s = await startServer({ signup: "verify", smtp: { url: smtp.url } });
  for (const email of ["root@localhost", "b@0xa9fea9fe", "ops@db.internal"]) {
    const b = browser(s.url);
    const page = await b.send("/dashboard/signup");
    const r = await b.send("/dashboard/signup", {
      form: { _csrf: page.csrf, email, password: "a password of mine" },
    });
    assert.equal(r.status, 422, email);
    assert.match(r.text, /Mail cannot go to that host: enter an address on the public internet/);
  }
  await new Promise((r) => setTimeout(r, 300)); // a mail sent after the answer would be in by now
  assert.equal(smtp.received.length, 0, "no mail to a private host");
  // An account's settings: the same, before any confirmation is mailed.
  await withAlertsOwner("owner-fb@example.com", async ({ smtp, owner, alertsTo }) => {
    const saved = await saveAlertAddress(owner, "root@localhost");
    assert.equal(saved.status, 422);
    assert.match(saved.text, /address on the internet/);
    await new Promise((r) => setTimeout(r, 300));
    assert.equal(smtp.received.length, 0, "no mail to a private host");
    assert.equal(await alertsTo(), null);
  });
});

Deno.test("settings with an alert address stored before private hosts were refused still save the alerts' boxes (probe FC)", () =>
  withAlertsOwner("owner-fc@example.com", async ({ smtp, s, owner }) => {
    const id = (await s.accounts.idByEmail("owner-fc@example.com"))!;
    const record = (await s.kv.get<AccountState>(KV.account(id))).value!;
    record.alerts = { at80: true, at100: true, email: "alerts@corp.internal", confirmed: null };
    await s.kv.set(KV.account(id), record);
    const page = await owner.send("/dashboard/settings");
    const shown = /name="alert_email"[^>]*value="([^"]*)"/.exec(page.text)?.[1];
    assert.equal(shown, "alerts@corp.internal");
    // Both boxes unchecked, the address as the form shows it.
    const saved = await owner.send("/dashboard/settings", {
      form: { _csrf: page.csrf, alerts_form: "1", alert_email: shown },
    });
    assert.equal(saved.status, 303, saved.text.slice(0, 300));
    const alerts = (await s.accounts.get(id)).alerts!;
    assert.deepEqual([alerts.at80, alerts.at100, alerts.email], [
      false,
      false,
      "alerts@corp.internal",
    ]);
    await new Promise((r) => setTimeout(r, 300));
    assert.equal(smtp.received.length, 0, "no mail to the private host");
  }));

Deno.test("SIGNUP=open: one client starts at most 20 sign-ups an hour; the 21st is refused", async () => {
  const clock = new ManualClock();
  await using s = await startServer({ signup: "open", trustProxy: true, clock });
  const signUp = async (i: number, client: string) => {
    const b = browser(s.url);
    const page = await b.send("/dashboard/signup");
    return await b.send("/dashboard/signup", {
      headers: { "x-forwarded-for": client },
      form: { _csrf: page.csrf, email: `many${i}@example.com`, password: PASSWORD },
    });
  };
  // README "Dashboard": `open` creates the account at once, at most 20 an hour per client.
  for (let i = 0; i < 20; i++) {
    assert.equal((await signUp(i, "198.51.100.30")).status, 303, `sign-up ${i + 1}`);
  }
  const over = await signUp(100, "198.51.100.30");
  assert.equal(over.status, 429);
  assert.match(over.text, /Too many sign-ups from your network/);
  assert.equal(await s.accounts.idByEmail("many100@example.com"), null, "no account past it");
  assert.equal((await signUp(101, "198.51.100.31")).status, 303, "another client signs up");
  clock.advance(SIGNUP_WINDOW_MS);
  assert.equal((await signUp(102, "198.51.100.30")).status, 303, "the next hour");
});

Deno.test("passwords: 10 to 200 characters; 9 or 201 are refused at sign-up and at a change, nothing stored", async () => {
  await using s = await startServer({ signup: "open" });
  const signUp = async (email: string, password: string) => {
    const b = browser(s.url);
    const page = await b.send("/dashboard/signup");
    return {
      b,
      r: await b.send("/dashboard/signup", { form: { _csrf: page.csrf, email, password } }),
    };
  };
  const short = await signUp("nine@example.com", "x".repeat(9));
  assert.equal(short.r.status, 422);
  assert.match(short.r.text, /The password needs at least 10 characters/);
  assert.equal(await s.accounts.idByEmail("nine@example.com"), null);
  const long = await signUp("long@example.com", "x".repeat(201));
  assert.equal(long.r.status, 422);
  assert.match(long.r.text, /The password may have at most 200 characters/);
  assert.equal(await s.accounts.idByEmail("long@example.com"), null);
  const ten = await signUp("ten@example.com", "0123456789");
  assert.equal(ten.r.status, 303, "10 characters are enough");
  assert.equal((await signIn(browser(s.url), "ten@example.com", "0123456789")).status, 303);
  const max = await signUp("max@example.com", "y".repeat(200));
  assert.equal(max.r.status, 303, "200 characters are allowed");
  assert.equal((await signIn(browser(s.url), "max@example.com", "y".repeat(200))).status, 303);

  // A change, signed in: the same bounds, and a refused one leaves the password as it was.
  const b = ten.b;
  const change = async (password: string) => {
    const page = await b.send("/dashboard/password");
    return await b.send("/dashboard/password", {
      form: { _csrf: page.csrf, current: "0123456789", password },
    });
  };
  const refused: [string, RegExp][] = [["z".repeat(9), /at least 10/], [
    "z".repeat(201),
    /at most 200/,
  ]];
  for (const [password, why] of refused) {
    const r = await change(password);
    assert.equal(r.status, 422, `${password.length} characters`);
    assert.match(r.text, why);
    assert.equal((await signIn(browser(s.url), "ten@example.com", password)).status, 401);
  }
  assert.equal((await signIn(browser(s.url), "ten@example.com", "0123456789")).status, 303);
  assert.equal((await change("z".repeat(200))).status, 303, "a change to 200 characters");
  assert.equal((await signIn(browser(s.url), "ten@example.com", "z".repeat(200))).status, 303);
});

Deno.test("sign-up and forgot-password answer the same whether or not the address has an account", async () => {
  await using smtp = await startSmtpSink();
  await using s = await startServer({ signup: "verify", smtp: { url: smtp.url } });
  await s.accounts.create("taken@example.com");
  const answer = async (path: string, fields: Record<string, string>) => {
    const b = browser(s.url);
    const page = await b.send(path);
    const r = await b.send(path, { form: { _csrf: page.csrf, ...fields } });
    return { status: r.status, text: r.text };
  };
  const taken = await answer("/dashboard/signup", {
    email: "taken@example.com",
    password: PASSWORD,
  });
  const free = await answer("/dashboard/signup", { email: "free@example.com", password: PASSWORD });
  assert.deepEqual(taken, free);
  const known = await answer("/dashboard/forgot", { email: "taken@example.com" });
  const unknown = await answer("/dashboard/forgot", { email: "nobody@example.com" });
  assert.deepEqual(known, unknown);
  await eventually("three mails", () => smtp.received.length === 3);
  const to = (addr: string) =>
    smtp.received.filter((m) => m.to.includes(addr)).map((m) => m.subject).sort();
  assert.deepEqual(to("taken@example.com"), ["Reset your Shelf password", "Your Shelf account"]);
  assert.deepEqual(to("free@example.com"), ["Confirm your Shelf account"]);
  assert.deepEqual(to("nobody@example.com"), []);
});

Deno.test("sign-ups a stranger makes for a taken address use up its mails, and each mail holds a working reset link (probe CQ)", async () => {
  await using smtp = await startSmtpSink();
  await using s = await startServer({ signup: "verify", smtp: { url: smtp.url } });
  await s.accounts.create("owner@example.com"); // made by the operator: no password yet
  for (let i = 0; i < ACCOUNT_MAIL_LIMIT; i++) {
    const b = browser(s.url);
    const page = await b.send("/dashboard/signup");
    await b.send("/dashboard/signup", {
      form: { _csrf: page.csrf, email: "owner@example.com", password: PASSWORD },
    });
  }
  await eventually("the stranger's mails", () => smtp.received.length === ACCOUNT_MAIL_LIMIT);
  // The owner's own reset request this hour sends nothing more: the address had its mails.
  const b = browser(s.url);
  const f = await b.send("/dashboard/forgot");
  await b.send("/dashboard/forgot", { form: { _csrf: f.csrf, email: "owner@example.com" } });
  await new Promise((r) => setTimeout(r, 300));
  assert.equal(smtp.received.length, ACCOUNT_MAIL_LIMIT);
  // But any of the mails the stranger caused lets the owner in.
  assert.ok(smtp.received.every((m) => m.subject === "Your Shelf account"));
  const token = linkIn(smtp.received[1].raw, "/dashboard/reset");
  assert.equal(await resetWith(s.url, token, "the owner's first password"), 303);
  assert.equal(
    (await signIn(browser(s.url), "owner@example.com", "the owner's first password")).status,
    303,
  );
});

Deno.test("a reset link sets a new password once, and ends every session of the account", async () => {
  await using smtp = await startSmtpSink();
  await using s = await startServer({ signup: "open", smtp: { url: smtp.url } });
  const email = "reset@example.com";
  const other = browser(s.url);
  await signUpOpen(other, email);
  assert.equal((await other.send("/dashboard/keys")).status, 200, "signed in");

  const token = await askReset(s.url, smtp, email, 1);
  const b = browser(s.url);
  const form = await b.send(`/dashboard/reset?token=${token}`);
  assert.equal(form.status, 200);
  const short = await b.send("/dashboard/reset", {
    form: { _csrf: form.csrf, token, password: "short" },
  });
  assert.equal(short.status, 422);
  const set = await b.send("/dashboard/reset", {
    form: { _csrf: form.csrf, token, password: "a brand new password" },
  });
  assert.equal(set.status, 303);
  assert.equal(set.headers.get("location"), "/dashboard/signin?reset=1");

  const stale = await other.send("/dashboard/keys");
  assert.equal(stale.status, 303, "the other browser's session ended");
  assert.equal(stale.headers.get("location"), "/dashboard/signin");
  assert.equal(
    (await signIn(browser(s.url), email)).status,
    401,
    "the old password no longer works",
  );
  assert.equal((await signIn(browser(s.url), email, "a brand new password")).status, 303);
  const reuse = await b.send("/dashboard/reset", {
    form: { _csrf: form.csrf, token, password: "yet another password" },
  });
  assert.equal(reuse.status, 400, "the link works once");
});

Deno.test("a reset link dies with the password it was asked for: a reset or a change since voids it", async () => {
  await using smtp = await startSmtpSink();
  await using s = await startServer({ signup: "open", smtp: { url: smtp.url } });
  const email = "twice@example.com";
  const owner = browser(s.url);
  await signUpOpen(owner, email);
  const ask = (n: number) => askReset(s.url, smtp, email, n);
  const reset = (token: string, password: string) => resetWith(s.url, token, password);
  // Two links asked for; the first one used; the second, older than that reset, no longer works.
  const first = await ask(1);
  const second = await ask(2);
  assert.equal(await reset(first, "reset by the first link"), 303);
  // Opened, the stale link says so at once (probe GK: it showed the form, then refused it).
  const opened = await fetch(`${s.url}/dashboard/reset?token=${encodeURIComponent(second)}`);
  assert.equal(opened.status, 400);
  assert.doesNotMatch(await opened.text(), /name="password"/);
  assert.equal(await reset(second, "reset by a stale link"), 400);
  assert.equal((await signIn(browser(s.url), email, "reset by the first link")).status, 303);
  // A link asked for, then the password changed while signed in: the link is void too.
  const third = await ask(3);
  const b = browser(s.url);
  await signIn(b, email, "reset by the first link");
  const page = await b.send("/dashboard/password");
  const changed = await b.send("/dashboard/password", {
    form: { _csrf: page.csrf, current: "reset by the first link", password: "changed meanwhile" },
  });
  assert.equal(changed.status, 303);
  assert.equal(await reset(third, "reset after the change"), 400);
  assert.equal((await signIn(browser(s.url), email, "changed meanwhile")).status, 303);
});

Deno.test("an account the operator made has no password yet: setting its first one voids every link asked for before", async () => {
  await using smtp = await startSmtpSink();
  await using s = await startServer({ signup: "closed", smtp: { url: smtp.url } });
  const email = "onboard@example.com";
  await s.accounts.create(email);
  const links = [await askReset(s.url, smtp, email, 1), await askReset(s.url, smtp, email, 2)];
  const reset = (token: string, password: string) => resetWith(s.url, token, password);
  assert.equal(await reset(links[1], "the owner's first password"), 303);
  const owner = browser(s.url);
  assert.equal((await signIn(owner, email, "the owner's first password")).status, 303);
  assert.equal(await reset(links[0], "a forwarded copy of the mail"), 400);
  assert.equal((await owner.send("/dashboard/keys")).status, 200, "the owner stays signed in");
  assert.equal((await signIn(browser(s.url), email, "a forwarded copy of the mail")).status, 401);
});

Deno.test("changing the password needs the current one and signs every other browser out", async () => {
  await using s = await startServer({ signup: "open" });
  const email = "change@example.com";
  const a = browser(s.url);
  await signUpOpen(a, email);
  const b = browser(s.url);
  assert.equal((await signIn(b, email)).status, 303);

  const settings = await a.send("/dashboard/settings");
  assert.match(settings.text, /<a href="\/dashboard\/password">Change password<\/a>/);
  const page = await a.send("/dashboard/password");
  assert.equal(page.status, 200);
  const wrong = await a.send("/dashboard/password", {
    form: { _csrf: page.csrf, current: "not the password", password: "a brand new password" },
  });
  assert.equal(wrong.status, 401);
  const ok = await a.send("/dashboard/password", {
    form: { _csrf: page.csrf, current: PASSWORD, password: "a brand new password" },
  });
  assert.equal(ok.status, 303);
  const told = await a.send(ok.headers.get("location")!);
  assert.match(told.text, /Password changed\./, "the change is confirmed where it leads");
  assert.doesNotMatch(settings.text, /Password changed\./);
  assert.equal((await a.send("/dashboard/keys")).status, 200, "this browser stays signed in");
  assert.equal((await b.send("/dashboard/keys")).status, 303, "the other browser is signed out");
  assert.equal((await signIn(browser(s.url), email, "a brand new password")).status, 303);
});

Deno.test("the lockout starts at exactly the documented number of failures, and a correct password clears it", async () => {
  await using s = await startServer({ signup: "open" });
  await signUpOpen(browser(s.url), "edge@example.com");
  await signUpOpen(browser(s.url), "locked@example.com");
  for (let i = 0; i < SIGNIN_LIMIT - 1; i++) {
    assert.equal((await signIn(browser(s.url), "edge@example.com", "wrong password!")).status, 401);
  }
  assert.equal(
    (await signIn(browser(s.url), "edge@example.com")).status,
    303,
    `after ${SIGNIN_LIMIT - 1} failures the right password works`,
  );
  await wrongSignIns(s.url, "locked@example.com");
  const locked = await signIn(browser(s.url), "locked@example.com");
  assert.equal(
    locked.status,
    429,
    `after ${SIGNIN_LIMIT} failures even the right password is refused`,
  );
  assert.match(locked.text, /Too many failed attempts/);
});

Deno.test("the lockout lasts the documented 15 minutes from the first failure, not a minute less or more", async () => {
  const clock = new ManualClock(Date.UTC(2026, 0, 5, 12, 0, 0));
  await using s = await startServer({ signup: "open", clock });
  await signUpOpen(browser(s.url), "window@example.com");
  await wrongSignIns(s.url, "window@example.com");
  clock.advance(SIGNIN_WINDOW_MS - 60_000); // 14 minutes on: still locked
  assert.equal((await signIn(browser(s.url), "window@example.com")).status, 429);
  clock.advance(60_000); // the window is over
  assert.equal((await signIn(browser(s.url), "window@example.com")).status, 303);
  assert.equal(SIGNIN_WINDOW_MS, 15 * 60_000, "the README documents 15 minutes");
});

Deno.test("a parallel burst of guesses gets at most the limit through, and instances on one store share the count", async () => {
  const kvPath = await Deno.makeTempFile({ suffix: ".kv" });
  await using one = await startServer({ signup: "open", kvPath });
  await using two = await startServer({ signup: "open", kvPath });
  await signUpOpen(browser(one.url), "burst@example.com");
  const statuses = await Promise.all(
    Array.from(
      { length: 30 },
      (_, i) =>
        signIn(browser(i % 2 ? one.url : two.url), "burst@example.com", "wrong password!").then((
          r,
        ) => r.status),
    ),
  );
  assert.deepEqual([...one.errors, ...two.errors], []);
  assert.equal(
    statuses.filter((x) => x === 401).length,
    SIGNIN_LIMIT,
    `checked: ${statuses.join(",")}`,
  );
  assert.equal(
    statuses.filter((x) => x === 429).length,
    30 - SIGNIN_LIMIT,
    `statuses: ${statuses.join(",")}`,
  );
  report("10. sign-in lockout (parallel burst, two instances)", {
    guesses: 30,
    "password checks": statuses.filter((x) => x === 401).length,
    refused: statuses.filter((x) => x === 429).length,
    limit: SIGNIN_LIMIT,
  });
  assert.equal(
    (await signIn(browser(two.url), "burst@example.com")).status,
    429,
    "the other instance refuses too",
  );
  await removeKvFiles(kvPath);
});

Deno.test("Secure follows PUBLIC_URL and, with TRUST_PROXY, X-Forwarded-Proto; never the Host header", async () => {
  const cookieOf = async (s: { url: string }, headers: Record<string, string> = {}) => {
    const r = await fetch(s.url + "/dashboard/signin", { headers });
    await r.body?.cancel();
    return r.headers.getSetCookie().find((c) => /^(__Host-)?shelf_form=/.test(c)) ?? "";
  };
  {
    await using s = await startServer({ publicUrl: "https://shelf.example", signup: "open" });
    const cookie = await cookieOf(s);
    assert.match(cookie, /; Secure/i, "an https public origin: Secure, even over loopback http");
    // The __Host- prefix: a browser takes it only from this host, for Path=/, with no Domain.
    assert.match(cookie, /^__Host-shelf_form=[0-9a-f]{32}; /);
    assert.match(cookie, /; Path=\/(;|$)/i);
    assert.doesNotMatch(cookie, /; Domain=/i);
    const b = browser(s.url);
    await signUpOpen(b, "host@example.com");
    assert.ok(b.jar.has("__Host-shelf_session"), "signed in under the prefixed name");
    // A session planted under the plain name (by a sibling subdomain, say) is not read.
    const planted = browser(s.url);
    planted.jar.set("shelf_session", b.jar.get("__Host-shelf_session")!);
    const r = await planted.send("/dashboard/keys");
    assert.equal(r.status, 303, "the plain name is no session over https");
    assert.equal((await b.send("/dashboard/keys")).status, 200);
  }
  {
    await using s = await startServer({ publicUrl: "http://localhost:8000" });
    for (const host of ["localhost", "api.example.com"]) {
      assert.doesNotMatch(await cookieOf(s, { host }), /; Secure/i, `Host ${host} decides nothing`);
    }
    assert.doesNotMatch(
      await cookieOf(s, { "x-forwarded-proto": "https" }),
      /; Secure/i,
      "X-Forwarded-Proto ignored without TRUST_PROXY",
    );
  }
  {
    await using s = await startServer({ publicUrl: "http://localhost:8000", trustProxy: true });
    assert.match(await cookieOf(s, { "x-forwarded-proto": "https" }), /; Secure/i);
    assert.doesNotMatch(await cookieOf(s, { "x-forwarded-proto": "http" }), /; Secure/i);
  }
});

Deno.test("forged forms: a malformed Origin, or neither form cookie nor token, is a 403", async () => {
  await using s = await startServer({ signup: "open" });
  const b = browser(s.url);
  const page = await b.send("/dashboard/signup");
  for (const origin of ["http://[bad", "not a url", "http://", "://x"]) {
    const r = await b.send("/dashboard/signup", {
      form: { _csrf: page.csrf, email: "o@example.com", password: PASSWORD },
      headers: { origin },
    });
    assert.equal(r.status, 403, `Origin ${origin}`);
  }
  const bare = await fetch(s.url + "/dashboard/signup", {
    method: "POST",
    redirect: "manual",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({ email: "bare@example.com", password: PASSWORD }),
  });
  await bare.body?.cancel();
  assert.equal(bare.status, 403, "no shelf_form cookie and no _csrf field");
  assert.equal(await s.accounts.idByEmail("bare@example.com"), null);
  assert.equal(await s.accounts.idByEmail("o@example.com"), null);
});

Deno.test("a session older than its 7-day lifetime is refused and sends the user back to sign in", async () => {
  const clock = new ManualClock();
  await using s = await startServer({ signup: "open", clock });
  const b = browser(s.url);
  await signUpOpen(b, "old@example.com");
  // The lifetime is the documented one (README: valid 7 days), not whatever the constant says.
  const WEEK = 7 * 24 * 3600 * 1000;
  assert.equal(SESSION_MS, WEEK);
  clock.advance(WEEK - 60_000);
  assert.equal(
    (await b.send("/dashboard/keys")).status,
    200,
    "still valid a minute before the end",
  );
  clock.advance(120_000);
  const r = await b.send("/dashboard/keys");
  assert.equal(r.status, 303);
  assert.equal(r.headers.get("location"), "/dashboard/signin");
});

Deno.test("SIGNUP=verify: a flood of sign-ups without confirmation creates no account and grants no credit", async () => {
  await using smtp = await startSmtpSink();
  await using s = await startServer({ signup: "verify", smtp: { url: smtp.url } });
  const n = 25;
  for (let i = 0; i < n; i++) {
    const b = browser(s.url);
    const page = await b.send("/dashboard/signup");
    const r = await b.send("/dashboard/signup", {
      form: { _csrf: page.csrf, email: `flood${i}@example.com`, password: PASSWORD },
    });
    assert.equal(r.status, 200);
  }
  let accounts = 0;
  for await (const _ of s.kv.list({ prefix: ["account"] })) accounts++;
  assert.equal(accounts, 0);
  // One client (loopback) posted them all: it gets its hour's mails, no more.
  await eventually("the confirmation mails", () => smtp.received.length >= CLIENT_MAIL_LIMIT);
  await new Promise((r) => setTimeout(r, 300));
  assert.equal(smtp.received.length, CLIENT_MAIL_LIMIT);
  let pending = 0;
  for await (const _ of s.kv.list({ prefix: ["email_token"] })) pending++;
  assert.equal(pending, CLIENT_MAIL_LIMIT, "a pending sign-up only where a mail went");
  report("10. free credits (SIGNUP=verify)", {
    "sign-ups without confirmation": n,
    "accounts created": accounts,
    "credits granted": 0,
    "mails sent (one client)": smtp.received.length,
  });
});

Deno.test("account mails: at most the documented number an hour per address, across instances, with the same answers", async () => {
  const kvPath = await Deno.makeTempFile({ suffix: ".kv" });
  const clock = new ManualClock(Date.UTC(2026, 0, 5, 12));
  await using smtp = await startSmtpSink();
  const opts = { signup: "verify" as const, smtp: { url: smtp.url }, kvPath, clock };
  await using one = await startServer(opts);
  await using two = await startServer(opts);
  await one.accounts.create("member@example.com");
  const post = async (url: string, path: string, fields: Record<string, string>) => {
    const b = browser(url);
    const page = await b.send(path);
    const r = await b.send(path, { form: { _csrf: page.csrf, ...fields } });
    return `${r.status} ${r.text}`;
  };
  const to = (addr: string) => smtp.received.filter((m) => m.to.includes(addr)).length;
  const settled = async (what: string, n: () => number, expected: number) => {
    await eventually(what, () => n() >= expected);
    await new Promise((r) => setTimeout(r, 300)); // none beyond it arrives late
    assert.equal(n(), expected, what);
  };

  // A burst of sign-ups for one address, on both instances at once: the same answer every time.
  const signups = await Promise.all(
    Array.from(
      { length: 8 },
      (_, i) =>
        post(i % 2 ? one.url : two.url, "/dashboard/signup", {
          email: "victim@example.com",
          password: PASSWORD,
        }),
    ),
  );
  assert.equal(new Set(signups).size, 1, "every answer the same");
  await settled("the victim's mails", () => to("victim@example.com"), ACCOUNT_MAIL_LIMIT);
  // Password resets for an account's address, and sign-ups naming it, share its count.
  for (let i = 0; i < 3; i++) {
    await post(one.url, "/dashboard/forgot", { email: "member@example.com" });
    await post(two.url, "/dashboard/signup", { email: "member@example.com", password: PASSWORD });
  }
  await settled("the member's mails", () => to("member@example.com"), ACCOUNT_MAIL_LIMIT);
  // Another address is not held back by them; the next hour gives the address its mails again.
  await post(one.url, "/dashboard/forgot", { email: "nobody@example.com" });
  clock.advance(ACCOUNT_MAIL_WINDOW_MS);
  await post(two.url, "/dashboard/signup", { email: "victim@example.com", password: PASSWORD });
  await settled("the next hour's mail", () => to("victim@example.com"), ACCOUNT_MAIL_LIMIT + 1);
  report("10. account mails per address (two instances)", {
    "forms posted for one address": 8,
    "mails it got": ACCOUNT_MAIL_LIMIT,
    limit: `${ACCOUNT_MAIL_LIMIT} an hour`,
    "after the hour": to("victim@example.com"),
  });
  await removeKvFiles(kvPath);
});

Deno.test("account mails: at most the documented number an hour per client; X-Forwarded-For counts only behind TRUST_PROXY", async () => {
  await using smtp = await startSmtpSink();
  await using proxied = await startServer({
    signup: "verify",
    smtp: { url: smtp.url },
    trustProxy: true,
  });
  await using direct = await startServer({ signup: "verify", smtp: { url: smtp.url } });
  let sent = 0;
  const signUp = async (url: string, i: number, forwardedFor?: string) => {
    const b = browser(url);
    const page = await b.send("/dashboard/signup");
    const headers = forwardedFor ? { "x-forwarded-for": forwardedFor } : undefined;
    const r = await b.send("/dashboard/signup", {
      headers,
      form: { _csrf: page.csrf, email: `list${i}@example.com`, password: PASSWORD },
    });
    assert.equal(r.status, 200);
  };
  const expect = async (what: string, more: number) => {
    sent += more;
    await eventually(what, () => smtp.received.length >= sent);
    await new Promise((r) => setTimeout(r, 300));
    assert.equal(smtp.received.length, sent, what);
  };
  // Behind the proxy, the last X-Forwarded-For entry is the client; what precedes it is the
  // client's own word and changes nothing.
  for (let i = 0; i < CLIENT_MAIL_LIMIT + 3; i++) {
    await signUp(proxied.url, i, `10.9.${i}.1, 198.51.100.7`);
  }
  await expect("one proxied client's mails", CLIENT_MAIL_LIMIT);
  // Each refused mail used to write an error line, any client's to cause: one line a minute now.
  assert.equal(
    proxied.errors.filter((e) => e.startsWith("account mail not sent")).length,
    1,
    JSON.stringify(proxied.errors),
  );
  // An IPv6 client is its /64, whatever the interface part.
  for (let i = 0; i < CLIENT_MAIL_LIMIT + 3; i++) {
    await signUp(proxied.url, 100 + i, `2001:db8:7:7:${(i + 1).toString(16)}::1`);
  }
  await expect("one /64's mails", CLIENT_MAIL_LIMIT);
  await signUp(proxied.url, 150, "198.51.100.8");
  await expect("another client's mail", 1);
  // Behind two proxies (a CDN, then a load balancer) the client is the entry the outer one added,
  // whichever edge the load balancer saw.
  await using chained = await startServer({
    signup: "verify",
    smtp: { url: smtp.url },
    trustProxy: 2,
  });
  for (let i = 0; i < CLIENT_MAIL_LIMIT + 2; i++) {
    await signUp(chained.url, 300 + i, `10.1.${i}.1, 198.51.100.9, 192.0.2.${i + 1}`);
  }
  await expect("a client behind two proxies", CLIENT_MAIL_LIMIT);
  // Without TRUST_PROXY the header is the client's word: every post is the loopback peer's.
  for (let i = 0; i < CLIENT_MAIL_LIMIT + 2; i++) {
    await signUp(direct.url, 200 + i, `203.0.113.${i}`);
  }
  await expect("the direct client's mails", CLIENT_MAIL_LIMIT);
});

Deno.test("sign-in: one client makes at most the documented number of attempts a window, whatever the emails", async () => {
  await using s = await startServer({ signup: "open", trustProxy: true });
  const attempt = async (i: number, client: string) => {
    const b = browser(s.url);
    const page = await b.send("/dashboard/signin");
    const r = await b.send("/dashboard/signin", {
      headers: { "x-forwarded-for": client },
      form: { _csrf: page.csrf, email: `made-up-${i}@example.com`, password: "wrong password!" },
    });
    return { status: r.status, text: r.text };
  };
  for (let i = 0; i < CLIENT_SIGNIN_LIMIT; i += 10) {
    const batch = await Promise.all(
      Array.from({ length: 10 }, (_, j) => attempt(i + j, "198.51.100.20")),
    );
    assert.deepEqual(batch.map((r) => r.status), Array(10).fill(401));
  }
  const over = await attempt(1_000, "198.51.100.20");
  assert.equal(over.status, 429);
  assert.match(over.text, /from your network/);
  let counters = 0;
  for await (const _ of s.kv.list({ prefix: ["signin_attempts"] })) counters++;
  assert.equal(counters, CLIENT_SIGNIN_LIMIT, "no counter for the refused attempt");
  assert.equal((await attempt(1_001, "198.51.100.21")).status, 401, "another client tries");
  // A proxy that appends the client's port names the same client on every connection.
  assert.equal((await attempt(1_002, "198.51.100.20:51234")).status, 429, "ip:port");
  assert.equal((await attempt(1_003, "[2001:db8:5::1]:443")).status, 401, "[v6]:port reads");
  // An entry that is no address is not "no client": such requests share the proxy's own bucket.
  for (let i = 0; i < CLIENT_SIGNIN_LIMIT; i += 10) {
    await Promise.all(Array.from({ length: 10 }, (_, j) => attempt(2_000 + i + j, "unknown")));
  }
  const unreadable = await attempt(3_000, "not-an-address");
  assert.equal(unreadable.status, 429, "an unreadable client counts as the proxy");
});

Deno.test("account mails: the /64s of one IPv6 /48 share the documented multiple of one client's limit", async () => {
  await using smtp = await startSmtpSink();
  await using s = await startServer({
    signup: "verify",
    smtp: { url: smtp.url },
    trustProxy: true,
  });
  const signUp = async (i: number, forwardedFor: string) => {
    const b = browser(s.url);
    const page = await b.send("/dashboard/signup");
    const r = await b.send("/dashboard/signup", {
      headers: { "x-forwarded-for": forwardedFor },
      form: { _csrf: page.csrf, email: `net${i}@example.com` },
    });
    assert.equal(r.status, 200);
  };
  const networkLimit = CLIENT_MAIL_LIMIT * NETWORK_FACTOR;
  let i = 0;
  // One more /64 than the network's share needs, each using its whole own limit.
  for (let block = 1; block <= NETWORK_FACTOR + 1; block++) {
    for (let n = 0; n < CLIENT_MAIL_LIMIT; n++) await signUp(i++, `2001:db8:9:${block}::${n + 1}`);
  }
  await eventually("the network's mails", () => smtp.received.length >= networkLimit);
  await new Promise((r) => setTimeout(r, 300));
  assert.equal(smtp.received.length, networkLimit, "the /48 got its share and no more");
  await signUp(i++, "2001:db8:a:1::1");
  await eventually("another /48's mail", () => smtp.received.length === networkLimit + 1);
});

Deno.test("a flood of sign-ins from one IPv6 /48 waits in its own turn: another client's sign-in still gets through", async () => {
  await using s = await startServer({ signup: "open", trustProxy: true });
  const email = "patient@example.com";
  const owner = browser(s.url);
  await signUpOpen(owner, email);
  const flood = browser(s.url);
  const page = await flood.send("/dashboard/signin");
  const attempts = Array.from({ length: 300 }, (_, i) =>
    flood.send("/dashboard/signin", {
      headers: { "x-forwarded-for": `2001:db8:66:${(i + 1).toString(16)}::1` },
      form: { _csrf: page.csrf, email: `nobody${i}@example.com`, password: "not a password" },
    }));
  await new Promise((r) => setTimeout(r, 200)); // the flood is queued by now
  const b = browser(s.url);
  const form = await b.send("/dashboard/signin");
  const mine = await b.send("/dashboard/signin", {
    headers: { "x-forwarded-for": "198.51.100.20" },
    form: { _csrf: form.csrf, email, password: PASSWORD },
  });
  const flooded = (await Promise.all(attempts)).map((r) => r.status);
  assert.equal(mine.status, 303, "the other client's correct password signs in");
  // Turned away as too much password work (503), or, when the /48's one window is too contended
  // to count an attempt, refused as over it (429); the rest checked (401).
  assert.ok(flooded.every((st) => [401, 429, 503].includes(st)), `flood answers: ${flooded}`);
  assert.ok(flooded.some((st) => st !== 401), "the flood was more than the password work takes");
});

Deno.test("a browser that signed in before still signs in while guessers elsewhere have locked the email", async () => {
  await using s = await startServer({ signup: "open" });
  const email = "owner@example.com";
  const owner = await knownBrowser(s.url, email);
  await wrongSignIns(s.url, email);
  assert.equal((await signIn(browser(s.url), email)).status, 429, "the email is locked");
  assert.equal((await signIn(owner, email)).status, 303, "the owner's browser is not");
  assert.equal((await owner.send("/dashboard/keys")).status, 200);
  await signOut(owner);
  // The owner's sign-in gave the guessers no fresh attempts.
  assert.equal((await signIn(browser(s.url), email)).status, 429);
  // A device cookie counts only for the email it signed in to.
  await signUpOpen(browser(s.url), "other@example.com");
  const other = browser(s.url);
  other.jar.set("shelf_device", owner.jar.get("shelf_device")!);
  await wrongSignIns(s.url, "other@example.com");
  assert.equal((await signIn(other, "other@example.com")).status, 429);
});

Deno.test("a known browser has its own 10 attempts: wrong passwords from it lock it, not the email", async () => {
  await using s = await startServer({ signup: "open" });
  const email = "device@example.com";
  const owner = await knownBrowser(s.url, email);
  await wrongSignIns(s.url, email, () => owner);
  assert.equal((await signIn(owner, email)).status, 429, "the device's window is spent");
  assert.equal((await signIn(browser(s.url), email)).status, 303, "the email's is not");
});

Deno.test("an email is given at most NEW_DEVICES_PER_DAY new devices a day; sign-in goes on without one", async () => {
  await using s = await startServer({ signup: "open" });
  const email = "script@example.com";
  await signUpOpen(browser(s.url), email);
  for (let i = 0; i < NEW_DEVICES_PER_DAY; i++) {
    const b = browser(s.url);
    assert.equal((await signIn(b, email)).status, 303);
    assert.ok(b.jar.has("shelf_device"), `device ${i + 1}`);
  }
  const past = browser(s.url);
  assert.equal((await signIn(past, email)).status, 303, "signed in all the same");
  assert.ok(!past.jar.has("shelf_device"), "without a new device");
});

Deno.test("a signed-in owner changes the password while guessers keep the email locked; the change forgets every device", async () => {
  await using s = await startServer({ signup: "open" });
  const email = "changer@example.com";
  const owner = await signedUpAndIn(s.url, email);
  const other = browser(s.url); // another browser of the owner's, known as a device too
  assert.equal((await signIn(other, email)).status, 303);
  await signOut(other);
  await wrongSignIns(s.url, email);
  assert.equal((await signIn(browser(s.url), email)).status, 429, "the email is locked");
  const page = await owner.send("/dashboard/password");
  const changed = await owner.send("/dashboard/password", {
    form: { _csrf: page.csrf, current: PASSWORD, password: "a brand new password" },
  });
  assert.equal(changed.status, 303, "the lockout of the email does not stop its signed-in owner");
  // A device known under the old password is not one any more: it gets no attempts of its own.
  assert.equal((await signIn(other, email, "a brand new password")).status, 429);
});

Deno.test("a known browser signs in though its network has used up its sign-in attempts", async () => {
  await using s = await startServer({ signup: "open" });
  const email = "neighbour@example.com";
  const owner = await knownBrowser(s.url, email);
  // A neighbour on the same address tries passwords on many emails until the address is refused.
  for (let i = 0; i < CLIENT_SIGNIN_LIMIT; i++) {
    await signIn(browser(s.url), `nobody${i}@example.com`, "wrong password!");
  }
  assert.equal((await signIn(browser(s.url), email)).status, 429, "the address is refused");
  assert.equal((await signIn(owner, email)).status, 303, "the owner's browser is not");
});

Deno.test("an account keeps at most 20 sessions: the 21st sign-in ends the oldest, not the store", async () => {
  // README "Dashboard": an account keeps at most 20 sessions, a new one ending its oldest.
  const SESSIONS = 20;
  await using s = await startServer({ signup: "open" });
  const email = "again@example.com";
  // The sign-up's own session is the account's first, and oldest.
  const first = browser(s.url);
  await signUpOpen(first, email);
  assert.equal((await first.send("/dashboard/keys")).status, 200);
  const stored = async () => {
    let n = 0;
    for await (const _ of s.kv.list({ prefix: ["session"] })) n++;
    return n;
  };
  // A script signing in again and again, one session a time (within the per-client limits).
  const again = browser(s.url);
  const signInAgain = async (i: number) => {
    again.jar.clear(); // no session or device cookie kept
    assert.equal((await signIn(again, email)).status, 303, `sign-in ${i}`);
  };
  // The sign-up's session and 19 more: all 20 are kept.
  for (let i = 2; i <= SESSIONS; i++) await signInAgain(i);
  assert.equal(await stored(), SESSIONS);
  assert.equal((await first.send("/dashboard/keys")).status, 200, "20 sessions: the oldest lives");
  // The 21st ends the oldest.
  await signInAgain(SESSIONS + 1);
  assert.equal(await stored(), SESSIONS);
  assert.equal((await first.send("/dashboard/keys")).status, 303, "the 21st ended the oldest");
  for (let i = SESSIONS + 2; i <= SESSIONS + 10; i++) await signInAgain(i);
  assert.equal(await stored(), SESSIONS);
  assert.equal((await again.send("/dashboard/keys")).status, 200, "the newest session works");
  // Signing out takes the session's entry in the account's list with it.
  await signOut(again);
  assert.equal(await stored(), SESSIONS - 1);
  let listed = 0;
  for await (const _ of s.kv.list({ prefix: ["account_session"] })) listed++;
  assert.equal(listed, SESSIONS - 1);
});

Deno.test("a known browser's sign-ins that succeed count in its window too", async () => {
  await using s = await startServer({ signup: "open" });
  const email = "repeat@example.com";
  const owner = await knownBrowser(s.url, email);
  await wrongSignIns(s.url, email);
  // The device's own window: SIGNIN_LIMIT sign-ins, each a success (cleared on success, one
  // remembered browser signed in 33 times a second, each a scrypt run and a stored session).
  for (let i = 0; i < SIGNIN_LIMIT; i++) {
    owner.jar.delete("shelf_session");
    assert.equal((await signIn(owner, email)).status, 303, `sign-in ${i + 1}`);
  }
  owner.jar.delete("shelf_session");
  const spent = await signIn(owner, email);
  assert.equal(spent.status, 429);
  assert.match(spent.text, /Too many sign-ins from this browser/);
  assert.equal((await signIn(browser(s.url), email)).status, 429, "the email is still locked");
});

Deno.test("an account's dashboard pages are limited to DASHBOARD_PER_SECOND a second: a burst gets 429s, not the heap", async () => {
  await using s = await startServer({ signup: "open" });
  const email = "burst@example.com";
  const b = await signedUpAndIn(s.url, email);
  // 16,000 of these at once over HTTP/2 took the process past V8's heap limit (probe X).
  const burst = await Promise.all(
    Array.from({ length: 3 * DASHBOARD_PER_SECOND }, () => b.send("/dashboard/watches")),
  );
  const ok = burst.filter((r) => r.status === 200).length;
  const refused = burst.filter((r) => r.status === 429);
  // A burst can straddle a second's end: at most two seconds' worth get through.
  assert.ok(ok >= 1 && ok <= 2 * DASHBOARD_PER_SECOND, `${ok} answered`);
  assert.equal(ok + refused.length, burst.length);
  assert.match(refused[0].text, /Too many pages at once for this account/);
  await new Promise((r) => setTimeout(r, 1_100));
  assert.equal((await b.send("/dashboard/watches")).status, 200, "the next second, pages again");
});

Deno.test("a signed-in browser can use a reset link: its form carries the browser's form token", async () => {
  await using smtp = await startSmtpSink();
  await using s = await startServer({ signup: "open", smtp: { url: smtp.url } });
  const email = "signed-in-reset@example.com";
  const owner = await signedUpAndIn(s.url, email);
  const token = await askReset(s.url, smtp, email, 1);
  // The same browser, still signed in, opens the link and sends the form (it was refused 403).
  const page = await owner.send(`/dashboard/reset?token=${token}`);
  assert.equal(page.status, 200);
  const r = await owner.send("/dashboard/reset", {
    form: { _csrf: page.csrf, token, password: "a brand new password" },
  });
  assert.equal(r.status, 303, `reset answered ${r.status}`);
  assert.equal((await signIn(browser(s.url), email, "a brand new password")).status, 303);
  // The new password ended the browser's session, as every other.
  assert.equal((await owner.send("/dashboard/keys")).status, 303, "signed out");
});

/** The settings form sent with both alerts on and `address` for them. */
async function saveAlertAddress(owner: Browser, address: string) {
  const page = await owner.send("/dashboard/settings");
  return await owner.send("/dashboard/settings", {
    form: { _csrf: page.csrf, alerts_form: "1", at80: "on", at100: "on", alert_email: address },
  });
}

Deno.test("an alert address other than the account's own is used only once a mailed link confirms it", () =>
  withAlertsOwner("alerts-owner@example.com", async ({ smtp, s, email, owner, alertsTo }) => {
    const save = (address: string) => saveAlertAddress(owner, address);

    // A stranger's address: not used yet, and mailed a link (before, it was used at once and any
    // address could be sent the operator's alert mails outside the account mail limits; probe AG).
    const r = await save("Stranger@Example.com");
    assert.equal(r.status, 303);
    assert.match(r.headers.get("location") ?? "", /confirm=1/);
    assert.equal(await alertsTo(), null, "alerts still go to the account's own address");
    await eventually("the confirmation mail", () => smtp.received.length === 1);
    assert.deepEqual(smtp.received[0].to, ["stranger@example.com"]);
    const token = linkIn(smtp.received[0].raw, "/dashboard/alert-address");

    // Its owner opens the link (a mail scanner's fetch confirms nothing), then confirms.
    const stranger = browser(s.url);
    const page = await stranger.send(`/dashboard/alert-address?token=${token}`);
    assert.equal(page.status, 200);
    assert.equal(await alertsTo(), null);
    const done = await stranger.send("/dashboard/alert-address", {
      form: { _csrf: page.csrf, token },
    });
    assert.equal(done.status, 200);
    assert.equal(await alertsTo(), "stranger@example.com");
    const again = await stranger.send("/dashboard/alert-address", {
      form: { _csrf: page.csrf, token },
    });
    assert.equal(again.status, 400, "the link works once");

    // The account's own address needs no link, nor does emptying the field.
    assert.equal((await save(email)).headers.get("location"), "/dashboard/settings?saved=1");
    assert.equal(await alertsTo(), email);
    assert.equal((await save("")).headers.get("location"), "/dashboard/settings?saved=1");
    assert.equal(await alertsTo(), null);

    // The confirmation mails count in the account mail limits: the same address gets at most
    // ACCOUNT_MAIL_LIMIT an hour however often it is asked for.
    for (let i = 0; i < ACCOUNT_MAIL_LIMIT + 2; i++) await save("another@example.com");
    const toAnother = () => smtp.received.filter((m) => m.to.includes("another@example.com"));
    await eventually("the mails within the limit", () => toAnother().length >= ACCOUNT_MAIL_LIMIT);
    await new Promise((r) => setTimeout(r, 300)); // time for any mail past the limit to arrive
    assert.equal(toAnother().length, ACCOUNT_MAIL_LIMIT);
  }));

Deno.test("alert-address mails a stranger asks for do not use up an address's reset mails (probe CQ)", () =>
  withAlertsOwner("alerts-stranger@example.com", async ({ smtp, s, owner }) => {
    await s.accounts.create("victim@example.com");
    const toVictim = () => smtp.received.filter((m) => m.to.includes("victim@example.com"));
    for (let i = 0; i < ACCOUNT_MAIL_LIMIT; i++) {
      await saveAlertAddress(owner, "victim@example.com");
    }
    await eventually("the confirmations", () => toVictim().length === ACCOUNT_MAIL_LIMIT);
    const token = await askReset(s.url, smtp, "victim@example.com", smtp.received.length + 1);
    assert.equal(await resetWith(s.url, token, "the owner's new password"), 303);
    assert.equal(
      (await signIn(browser(s.url), "victim@example.com", "the owner's new password")).status,
      303,
    );
  }));

Deno.test("an alert-address link dies once the settings moved on or the password changed", () =>
  withAlertsOwner("alerts-moved-on@example.com", async ({ smtp, s, owner, alertsTo }) => {
    const linkTo = async (address: string) => {
      const r = await saveAlertAddress(owner, address);
      assert.match(r.headers.get("location") ?? "", /confirm=1/);
      await eventually(
        `the mail to ${address}`,
        () => smtp.received.some((m) => m.to[0] === address),
      );
      return linkIn(
        smtp.received.find((m) => m.to[0] === address)!.raw,
        "/dashboard/alert-address",
      );
    };
    const confirm = async (token: string) => {
      const b = browser(s.url);
      const page = await b.send(`/dashboard/alert-address?token=${token}`);
      if (page.status !== 200) return page.status; // no button to press
      return (await b.send("/dashboard/alert-address", { form: { _csrf: page.csrf, token } }))
        .status;
    };

    // Asked for one address, then another, which the owner confirms: the first link is void (it
    // took the alerts back to the first address, unnoticed; probe AU).
    const first = await linkTo("first@example.org");
    const second = await linkTo("second@example.org");
    assert.equal(await confirm(second), 200);
    const stale = await browser(s.url).send(`/dashboard/alert-address?token=${first}`);
    assert.equal(stale.status, 400, "its page says so, and shows no button");
    const direct = browser(s.url); // the form posted without its page
    const posted = await direct.send("/dashboard/alert-address", {
      form: { _csrf: (await direct.send("/dashboard/signin")).csrf, token: first },
    });
    assert.equal(posted.status, 400, "a link the owner moved on from");
    assert.equal(await alertsTo(), "second@example.org");

    // Asked for, then the password changed (by the owner, or to shut out whoever asked): void.
    const third = await linkTo("third@example.org");
    const page = await owner.send("/dashboard/password");
    const changed = await owner.send("/dashboard/password", {
      form: { _csrf: page.csrf, current: PASSWORD, password: "a brand new password" },
    });
    assert.equal(changed.status, 303);
    assert.equal(await confirm(third), 400, "a link asked for under the old password");
    assert.equal(await alertsTo(), "second@example.org");
  }));

Deno.test("the sign-up page tells the free plan as this catalog has it", async () => {
  const plans = new Plans([
    { id: "free", credits: 7, rate_limit_per_sec: 1, max_keys: 2, groups: ["products"] },
  ]);
  await using s = await startServer({ signup: "open", plans });
  const page = await browser(s.url).send("/dashboard/signup");
  assert.match(page.text, /starts on the free plan: 7 credits per 30 days, 2 keys\./);
});

Deno.test("without a mail server, the operator hands an account's owner a link to choose a password: admin API and CLI (probe FU)", async () => {
  const ADMIN = "an-admin-token-of-24-chars-at-least";
  await using s = await startServer({ signup: "closed", adminToken: ADMIN });
  const email = "nomail@example.com";
  const a = await s.accounts.create(email);
  // The dashboard says to ask the operator, who now has something to give.
  assert.match(await (await fetch(`${s.url}/dashboard/forgot`)).text(), /Ask the operator for a/);
  const asked = await fetch(`${s.url}/admin/accounts/${a.id}/reset-link`, {
    method: "POST",
    headers: { authorization: `Bearer ${ADMIN}` },
  });
  assert.equal(asked.status, 201);
  const link = await asked.json();
  assert.equal(link.account_id, a.id);
  const m = /^http:\/\/localhost:8000\/dashboard\/reset\?token=([0-9a-f]{64})$/.exec(link.url);
  assert.ok(m, link.url);
  const hour = Date.parse(link.expires_at) - Date.now();
  assert.ok(hour > 3_500_000 && hour <= 3_600_000, link.expires_at);
  assert.equal(await resetWith(s.url, m[1], "the first password of all"), 303);
  assert.equal((await signIn(browser(s.url), email, "the first password of all")).status, 303);
  assert.equal(await resetWith(s.url, m[1], "used a second time"), 400, "single use");
  // Without the token, or for no such account: nothing.
  assert.equal(
    (await fetch(`${s.url}/admin/accounts/${a.id}/reset-link`, { method: "POST" })).status,
    401,
  );
  const none = await fetch(`${s.url}/admin/accounts/acc_nope/reset-link`, {
    method: "POST",
    headers: { authorization: `Bearer ${ADMIN}` },
  });
  assert.equal(none.status, 404);
  await none.body?.cancel();
  // The CLI gives the same link, on PUBLIC_URL.
  const out = await runAdmin(
    ["account", "reset-link", a.id],
    s.kv,
    s.accounts,
    builtinPlans(),
    undefined,
    "https://api.example.com",
  ) as { url: string };
  const cli = /^https:\/\/api\.example\.com\/dashboard\/reset\?token=([0-9a-f]{64})$/.exec(out.url);
  assert.ok(cli, out.url);
  assert.equal(await resetWith(s.url, cli[1], "set from the cli link"), 303);
  assert.equal((await signIn(browser(s.url), email, "set from the cli link")).status, 303);
});

/** A server with open sign-ups behind a trusted proxy, and helpers that sign in or up from a given client. */
async function clientBudgets() {
  const s = await startServer({ signup: "open", trustProxy: true });
  const signInFrom = async (i: number, client: string) => {
    const b = browser(s.url);
    const page = await b.send("/dashboard/signin");
    return (await b.send("/dashboard/signin", {
      headers: { "x-forwarded-for": client },
      form: { _csrf: page.csrf, email: `nobody-${i}@example.com`, password: "wrong password!" },
    })).status;
  };
  const signUpFrom = async (email: string, client: string) => {
    const b = browser(s.url);
    const page = await b.send("/dashboard/signup");
    return (await b.send("/dashboard/signup", {
      headers: { "x-forwarded-for": client },
      form: { _csrf: page.csrf, email, password: PASSWORD },
    })).status;
  };
  const failedSignIns = async (client: string, from: number) => {
    for (let i = 0; i < CLIENT_SIGNIN_LIMIT; i += 10) {
      const batch = await Promise.all(
        Array.from({ length: 10 }, (_, j) => signInFrom(from + i + j, client)),
      );
      assert.deepEqual(batch, Array(10).fill(401), `sign-in attempts ${i + 1} to ${i + 10}`);
    }
  };
  return { s, signInFrom, signUpFrom, failedSignIns };
}

Deno.test("a client that used up its sign-in attempts still signs up: sign-ups are a budget of their own", async () => {
  const { s, signInFrom, signUpFrom, failedSignIns } = await clientBudgets();
  await using _ = s;
  await failedSignIns("198.51.100.40", 0);
  assert.equal(await signInFrom(999, "198.51.100.40"), 429, "its sign-in attempts are used up");
  assert.equal(await signUpFrom("after-signins@example.com", "198.51.100.40"), 303);
  assert.notEqual(await s.accounts.idByEmail("after-signins@example.com"), null);
});

Deno.test("a client that used up its sign-ups still has every one of its sign-in attempts", async () => {
  const { s, signUpFrom, failedSignIns } = await clientBudgets();
  await using _ = s;
  for (let i = 0; i < CLIENT_SIGNUP_LIMIT; i++) {
    assert.equal(await signUpFrom(`up-${i}@example.com`, "198.51.100.41"), 303, `sign-up ${i + 1}`);
  }
  assert.equal(
    await signUpFrom("up-over@example.com", "198.51.100.41"),
    429,
    "its sign-ups are used up",
  );
  await failedSignIns("198.51.100.41", 1_000);
});
