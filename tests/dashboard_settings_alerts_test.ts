/**
 * The dashboard's settings and alert-address pages, and the forms of every signed-in page, as a
 * browser meets them over plain HTTP: which box saves which threshold, the notices, the address a
 * confirmation names, a link voided by a password change even when POSTed directly, no new mail
 * for an address already confirmed, the CSRF field inside each form (not merely somewhere on the
 * page), the revoke notice, a deleted account's sessions, and the create-key form id's kept length.
 */
import assert from "node:assert/strict";
import { startServer } from "./test_server.ts";
import { eventually, startSmtpSink } from "./smtp_sink.ts";
import {
  type Browser,
  browser,
  linkIn,
  PASSWORD,
  signedUpAndIn,
  withAlertsOwner,
} from "./dashboard_client.ts";
import { all, attr, one, parseHtml, text } from "../parsers/dom.ts";
import { KV } from "../metering/kv_layout.ts";
import { hashKey } from "../metering/api_key.ts";
import type { Session } from "../metering/sessions.ts";
import type { AccountState } from "../metering/account_state.ts";
import { SESSION_COOKIE } from "../routes/dashboard/guard.ts";
import { Plans } from "../metering/plans.ts";

type Server = Awaited<ReturnType<typeof startServer>>;
type Sink = Awaited<ReturnType<typeof startSmtpSink>>;

/** The session the browser's cookie names, as the store holds it. */
async function sessionOf(s: Server, b: Browser): Promise<{ token: string; session: Session }> {
  const token = b.jar.get(SESSION_COOKIE);
  assert.ok(token, "a session cookie");
  const session = (await s.kv.get<Session>(KV.session(hashKey(token)))).value;
  assert.ok(session, "the session in the store");
  return { token, session };
}

/** The `_csrf` value inside the form posting to `action`, or null without such a field. */
function formCsrf(html: string, action: string): string | null {
  const form = one(parseHtml(html), `form[action="${action}"]`);
  assert.ok(form, `a form posting to ${action}`);
  const field = one(form, 'input[type="hidden"][name="_csrf"]');
  return field ? attr(field, "value") : null;
}

/** The settings form sent as a browser sends it: unchecked boxes are left out. */
async function saveSettings(
  owner: Browser,
  fields: { at80?: boolean; at100?: boolean; address?: string },
) {
  const page = await owner.send("/dashboard/settings");
  const form: Record<string, string> = {
    _csrf: formCsrf(page.text, "/dashboard/settings") ?? "",
    alerts_form: "1",
    alert_email: fields.address ?? "",
  };
  if (fields.at80) form.at80 = "on";
  if (fields.at100) form.at100 = "on";
  return await owner.send("/dashboard/settings", { form });
}

/** Mails a link for `address` (saved with both boxes on) and returns its token. */
async function linkFor(smtp: Sink, owner: Browser, address: string): Promise<string> {
  const r = await saveSettings(owner, { at80: true, at100: true, address });
  assert.equal(r.headers.get("location"), "/dashboard/settings?confirm=1");
  await eventually(`the mail to ${address}`, () => smtp.received.some((m) => m.to[0] === address));
  return linkIn(
    smtp.received.find((m) => m.to[0] === address)!.raw,
    "/dashboard/alert-address",
  );
}

/** Whether the settings page's box `name` is checked. */
function boxChecked(html: string, name: string): boolean {
  const box = one(parseHtml(html), `input[type="checkbox"][name="${name}"]`);
  assert.ok(box, `the ${name} box`);
  return box.attribs.checked !== undefined;
}

Deno.test("the 80% and 100% alert boxes each save and show their own threshold, both ways", () =>
  withAlertsOwner("boxes@example.com", async ({ owner, account }) => {
    for (const [at80, at100] of [[true, false], [false, true]]) {
      const r = await saveSettings(owner, { at80, at100 });
      assert.equal(r.headers.get("location"), "/dashboard/settings?saved=1");
      const alerts = (await account()).alerts;
      assert.equal(alerts?.at80, at80, `at80 saved as ${at80}`);
      assert.equal(alerts?.at100, at100, `at100 saved as ${at100}`);
      const page = await owner.send("/dashboard/settings");
      assert.equal(boxChecked(page.text, "at80"), at80, "the 80% box shows the 80% setting");
      assert.equal(boxChecked(page.text, "at100"), at100, "the 100% box shows the 100% setting");
    }
  }));

Deno.test("settings notice after ?confirm=1: the new address was mailed a link, and only then", () =>
  withAlertsOwner("notices@example.com", async ({ smtp, owner, account }) => {
    await linkFor(smtp, owner, "pending@example.org");
    assert.equal((await account()).alerts?.confirmed ?? null, null, "nothing confirmed yet");
    const told = await owner.send("/dashboard/settings?confirm=1");
    assert.match(told.text, /The new alert address was mailed a link/);
    const plain = await owner.send("/dashboard/settings");
    assert.doesNotMatch(plain.text, /was mailed a link/, "only after the save that mailed it");
  }));

Deno.test("settings notice: an alert address kept but not confirmed says where alerts go instead", async () => {
  // Without a mail server the address is kept unconfirmed, and alerts go to the account's own.
  await using s = await startServer({ signup: "open" });
  const owner = await signedUpAndIn(s.url, "unconfirmed@example.com");
  const id = (await s.accounts.idByEmail("unconfirmed@example.com"))!;
  const r = await saveSettings(owner, { at80: true, at100: true, address: "kept@example.org" });
  assert.equal(r.headers.get("location"), "/dashboard/settings?saved=1");
  const alerts = (await s.accounts.get(id)).alerts;
  assert.equal(alerts?.email, "kept@example.org");
  assert.notEqual(alerts?.confirmed, "kept@example.org");
  const page = await owner.send("/dashboard/settings");
  assert.match(
    page.text,
    /kept@example\.org is not confirmed: alerts go to unconfirmed@example\.com\./,
  );
});

Deno.test("the alert-address page names the address, and a link POSTed directly after a password change is void", () =>
  withAlertsOwner("direct-post@example.com", async ({ smtp, s, owner, account }) => {
    const token = await linkFor(smtp, owner, "asked@example.org");
    const opened = await browser(s.url).send(`/dashboard/alert-address?token=${token}`);
    assert.equal(opened.status, 200);
    const named = all(parseHtml(opened.text), "strong").map((n) => text(n).trim());
    assert.ok(named.includes("asked@example.org"), `the page names the address: ${named}`);

    // The owner changes the password, to shut out whoever asked; the link is then POSTed without
    // opening its page (whose GET is guarded too), with a form token from any page.
    const page = await owner.send("/dashboard/password");
    const changed = await owner.send("/dashboard/password", {
      form: { _csrf: page.csrf, current: PASSWORD, password: "a brand new password" },
    });
    assert.equal(changed.status, 303);
    const direct = browser(s.url);
    const posted = await direct.send("/dashboard/alert-address", {
      form: { _csrf: (await direct.send("/dashboard/signin")).csrf, token },
    });
    assert.equal(posted.status, 400, "a link asked for under the old password");
    assert.doesNotMatch(posted.text, /Address confirmed/);
    const alerts = (await account()).alerts;
    assert.notEqual(alerts?.confirmed, "asked@example.org", "not confirmed");
  }));

Deno.test("saving the settings with the already confirmed address mails no new confirmation", () =>
  withAlertsOwner("confirmed-once@example.com", async ({ smtp, s, owner, account }) => {
    const token = await linkFor(smtp, owner, "kept@example.org");
    const b = browser(s.url);
    const page = await b.send(`/dashboard/alert-address?token=${token}`);
    assert.equal(
      (await b.send("/dashboard/alert-address", { form: { _csrf: page.csrf, token } })).status,
      200,
    );
    assert.equal((await account()).alerts?.confirmed, "kept@example.org");

    const r = await saveSettings(owner, { at80: true, at100: false, address: "kept@example.org" });
    assert.equal(r.headers.get("location"), "/dashboard/settings?saved=1", "no link to confirm");
    assert.equal((await account()).alerts?.at100, false, "saved");
    // A later mail to another address, waited for, so that a mail the save sent had its time.
    await linkFor(smtp, owner, "barrier@example.org");
    await new Promise((r) => setTimeout(r, 200));
    const toKept = smtp.received.filter((m) => m.to.includes("kept@example.org"));
    assert.equal(toKept.length, 1, "only the first confirmation mail");
  }));

Deno.test("every signed-in form holds the session's CSRF field, and a POST without it is refused", async () => {
  await using s = await startServer({ signup: "open" });
  const owner = await signedUpAndIn(s.url, "csrf-forms@example.com");
  const { session } = await sessionOf(s, owner);
  const id = (await s.accounts.idByEmail("csrf-forms@example.com"))!;
  const { key } = await s.accounts.createKey(id, { name: "to revoke" });

  const keys = await owner.send("/dashboard/keys");
  assert.equal(formCsrf(keys.text, "/dashboard/signout"), session.csrf, "the sign-out form");
  const settings = await owner.send("/dashboard/settings");
  assert.equal(formCsrf(settings.text, "/dashboard/settings"), session.csrf, "the settings form");
  assert.equal(formCsrf(settings.text, "/dashboard/signout"), session.csrf);
  const revokePath = `/dashboard/keys/${key.id}/revoke`;
  const revoke = await owner.send(revokePath);
  assert.equal(revoke.status, 200);
  assert.equal(formCsrf(revoke.text, revokePath), session.csrf, "the revoke form");

  // Without the field each is refused, and changes nothing.
  assert.equal(
    (await owner.send("/dashboard/settings", { form: { alerts_form: "1" } })).status,
    403,
  );
  assert.equal((await owner.send(revokePath, { form: {} })).status, 403);
  assert.equal((await owner.send("/dashboard/signout", { form: {} })).status, 403);
  assert.equal((await s.accounts.get(id)).keys[key.id]?.status, "active");
  assert.equal((await owner.send("/dashboard/keys")).status, 200, "still signed in");
});

Deno.test("revoking a key over HTTP leads to the keys page with the revoke notice", async () => {
  await using s = await startServer({ signup: "open" });
  const owner = await signedUpAndIn(s.url, "revoke-notice@example.com");
  const id = (await s.accounts.idByEmail("revoke-notice@example.com"))!;
  const { key } = await s.accounts.createKey(id, { name: "old" });
  const path = `/dashboard/keys/${key.id}/revoke`;
  const page = await owner.send(path);
  const r = await owner.send(path, { form: { _csrf: formCsrf(page.text, path) ?? "" } });
  assert.equal(r.status, 303);
  const list = await owner.send(r.headers.get("location")!);
  assert.equal(list.status, 200);
  assert.match(list.text, /The key is revoked\. Calls with it now get 401\./);
  const listed = await s.accounts.listKeys(id);
  assert.equal(listed.find((k) => k.id === key.id)?.status, "revoked");
  const plain = await owner.send("/dashboard/keys");
  assert.doesNotMatch(plain.text, /The key is revoked/, "only right after a revoke");
});

Deno.test("a deleted account's sessions leave the store: its cookie signs nothing in, even once the account is restored", async () => {
  await using s = await startServer({ signup: "open" });
  const owner = await signedUpAndIn(s.url, "deleted@example.com");
  const id = (await s.accounts.idByEmail("deleted@example.com"))!;
  const { token } = await sessionOf(s, owner);
  const hash = hashKey(token);
  const record = await s.kv.get<AccountState>(KV.account(id));
  assert.ok(record.value);

  await s.kv.delete(KV.account(id));
  const gone = await owner.send("/dashboard/keys");
  assert.equal(gone.status, 303);
  assert.equal(gone.headers.get("location"), "/dashboard/signin");
  assert.equal((await s.kv.get(KV.session(hash))).value, null, "the session entry is gone");
  assert.equal(
    (await s.kv.get(KV.accountSession(id, hash))).value,
    null,
    "and the account's index of it",
  );

  // The account comes back (a restore); the old cookie still signs nothing in.
  await s.kv.set(KV.account(id), record.value);
  const again = await fetch(`${s.url}/dashboard/keys`, {
    headers: { cookie: `${SESSION_COOKIE}=${token}` },
    redirect: "manual",
  });
  await again.body?.cancel();
  assert.equal(again.status, 303);
  assert.equal(again.headers.get("location"), "/dashboard/signin");
});

Deno.test("a create-key form id is kept to its 12 first characters: ids differing only at the 12th each create a key", async () => {
  const plans = new Plans([
    { id: "free", credits: 50, rate_limit_per_sec: 1, max_keys: 5, groups: ["products"] },
  ]);
  await using s = await startServer({ signup: "open", plans });
  const owner = await signedUpAndIn(s.url, "form-ids@example.com");
  const id = (await s.accounts.idByEmail("form-ids@example.com"))!;
  const page = await owner.send("/dashboard/keys");
  const csrf = formCsrf(page.text, "/dashboard/keys") ?? "";
  const create = (formId: string) =>
    owner.send("/dashboard/keys", { form: { _csrf: csrf, form_id: formId, name: "k" } });
  const shared = "ab".repeat(5) + "c"; // 11 characters in common
  const first = shared + "0" + "1".repeat(20);
  const second = shared + "f" + "1".repeat(20);
  assert.equal((await create(first)).status, 200);
  assert.equal((await create(second)).status, 200, "another form, not a resend");
  assert.equal((await s.accounts.listKeys(id)).length, 2);
  // A resend of a form, or a form id the same in its first 12 characters, creates nothing.
  assert.equal((await create(first)).status, 409);
  assert.equal((await create(second.slice(0, 12) + "2".repeat(20))).status, 409);
  assert.equal((await s.accounts.listKeys(id)).length, 2);
});
