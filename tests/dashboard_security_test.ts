import assert from "node:assert/strict";
import { startServer } from "./test_server.ts";
import { createApp } from "../app.ts";
import { builtinPlans } from "../metering/plans.ts";
import { systemClock } from "../metering/clock.ts";
import { browser } from "./dashboard_client.ts";

async function signUp(
  b: ReturnType<typeof browser>,
  email = `u${crypto.randomUUID()}@example.com`,
) {
  const page = await b.send("/dashboard/signup");
  const r = await b.send("/dashboard/signup", {
    form: { _csrf: page.csrf, email, password: "correct horse battery" },
  });
  assert.equal(r.status, 303);
  assert.equal(r.headers.get("location"), "/dashboard/keys");
  return email;
}

Deno.test("dashboard: security headers on every page, the CSP allows no inline script but the hashed one", async () => {
  await using s = await startServer();
  const b = browser(s.url);
  for (const path of ["/dashboard/signin", "/dashboard/signup"]) {
    const r = await b.send(path);
    assert.equal(r.status, 200, path);
    const csp = r.headers.get("content-security-policy") ?? "";
    assert.match(csp, /default-src 'none'/);
    assert.match(csp, /script-src 'sha256-[A-Za-z0-9+/=]+'(;|$)/);
    assert.doesNotMatch(csp, /unsafe-inline|unsafe-eval/);
    assert.match(csp, /frame-ancestors 'none'/);
    assert.equal(r.headers.get("x-frame-options"), "DENY");
    assert.equal(r.headers.get("x-content-type-options"), "nosniff");
    assert.equal(r.headers.get("referrer-policy"), "same-origin");
    assert.equal(r.headers.get("cache-control"), "no-store");
    assert.doesNotMatch(r.text, /<script/, "no script on pages that show no new key");
  }
  await signUp(b);
  const created = await b.send("/dashboard/keys", {
    form: { _csrf: (await b.send("/dashboard/keys")).csrf, mode: "test" },
  });
  const script = /<script>([^<]*)<\/script>/.exec(created.text)?.[1] ?? "";
  const digest = new Uint8Array(
    await crypto.subtle.digest("SHA-256", new TextEncoder().encode(script)),
  );
  const hash = btoa(String.fromCharCode(...digest));
  assert.ok(
    (created.headers.get("content-security-policy") ?? "").includes(`'sha256-${hash}'`),
    "the one inline script is the hashed one",
  );
});

Deno.test("dashboard: a path under /dashboard that is no page is an HTML 404 with the dashboard's headers", async () => {
  await using s = await startServer();
  // Probe BS: these got the API's JSON 404.
  for (const path of ["/dashboard/", "/dashboard/keys/", "/dashboard/Keys", "/dashboard/nope/x"]) {
    const r = await fetch(`${s.url}${path}`);
    const body = await r.text();
    assert.equal(r.status, 404, path);
    assert.match(r.headers.get("content-type") ?? "", /text\/html/, path);
    assert.match(body, /No such page/, path);
    assert.ok(r.headers.get("content-security-policy"), path);
  }
  const api = await fetch(`${s.url}/v1/nope`);
  assert.match(api.headers.get("content-type") ?? "", /json/);
  await api.body?.cancel();
});

Deno.test("dashboard: a form posted without or with a wrong CSRF token is refused with 403", async () => {
  await using s = await startServer();
  const b = browser(s.url);
  const page = await b.send("/dashboard/signup");
  assert.ok(page.csrf, "the sign-up form carries a token");
  const email = "csrf@example.com";
  const missing = await b.send("/dashboard/signup", {
    form: { email, password: "correct horse battery" },
  });
  assert.equal(missing.status, 403);
  const wrong = await b.send("/dashboard/signup", {
    form: { _csrf: "0".repeat(32), email, password: "correct horse battery" },
  });
  assert.equal(wrong.status, 403);
  assert.equal(await s.accounts.idByEmail(email), null, "no account was created");

  await signUp(b);
  const keys = await b.send("/dashboard/keys");
  for (
    const form of [{ mode: "live" }, { mode: "live", _csrf: page.csrf }, {
      mode: "live",
      _csrf: "",
    }] as Record<string, string>[]
  ) {
    assert.equal((await b.send("/dashboard/keys", { form })).status, 403, JSON.stringify(form));
  }
  const foreign = await b.send("/dashboard/keys", {
    form: { _csrf: keys.csrf, mode: "live" },
    headers: { origin: "https://evil.example" },
  });
  assert.equal(foreign.status, 403, "a post from another origin is refused even with the token");
  assert.equal((await b.send("/dashboard/signout", { form: {} })).status, 403);
  const id = (await b.send("/dashboard/settings")).text;
  assert.match(id, /Settings/);
  const after = await b.send("/dashboard/keys");
  assert.doesNotMatch(after.text, /shelf_(live|test)_…/, "no key was created by the refused posts");
  const ok = await b.send("/dashboard/keys", {
    form: { _csrf: keys.csrf, mode: "live", name: "ok" },
  });
  assert.equal(ok.status, 200);
  assert.match(ok.text, /shelf_live_[0-9a-f]{48}/);
});

Deno.test("dashboard: a pre-sign-in form posted with no form cookie, no token and no Origin is refused 403, not processed (probe GP, AU2)", async () => {
  await using s = await startServer();
  const email = await signUp(browser(s.url));
  const fresh = `fresh${crypto.randomUUID()}@example.com`;
  // A bare client (curl -d): no cookie at all, no _csrf field, no Origin or Sec-Fetch-Site. The
  // expected token is then "" and so is the given one; they must not count as matching.
  const forms: [string, Record<string, string>][] = [
    ["/dashboard/signin", { email, password: "correct horse battery" }],
    ["/dashboard/signup", { email: fresh, password: "correct horse battery" }],
    ["/dashboard/forgot", { email }],
  ];
  for (const [path, form] of forms) {
    const r = await fetch(s.url + path, {
      method: "POST",
      body: new URLSearchParams(form),
      headers: { "content-type": "application/x-www-form-urlencoded" },
      redirect: "manual",
    });
    const text = await r.text();
    assert.equal(r.status, 403, path);
    assert.match(text, /security token is missing or out of date/, path);
    assert.equal(r.headers.get("location"), null, path);
    assert.ok(
      !r.headers.getSetCookie().some((c) => /session/i.test(c.split("=")[0])),
      `${path}: no session cookie`,
    );
  }
  assert.equal(await s.accounts.idByEmail(fresh), null, "the sign-up created no account");
});

Deno.test("dashboard: a form another site bounced here (Origin null, fetch metadata not same-origin) is refused even with the right token", async () => {
  await using s = await startServer();
  const email = await signUp(browser(s.url));
  // The victim's browser, holding a form cookie and token the attacker's page could have set.
  const victim = browser(s.url);
  const form = { _csrf: (await victim.send("/dashboard/signin")).csrf, email };
  const signIn = (headers: Record<string, string>) =>
    victim.send("/dashboard/signin", {
      form: { ...form, password: "correct horse battery" },
      headers,
    });
  assert.equal((await signIn({ origin: "null" })).status, 403, "Origin null, after a redirect");
  for (const site of ["same-site", "cross-site"]) {
    assert.equal((await signIn({ "sec-fetch-site": site })).status, 403, site);
  }
  assert.equal(
    (await victim.send("/dashboard/keys")).status,
    303,
    "not signed in: sent to sign in",
  );
  const own = await signIn({ origin: s.url, "sec-fetch-site": "same-origin" });
  assert.equal(own.status, 303, "the dashboard's own form");
  assert.equal(own.headers.get("location"), "/dashboard/keys");
  assert.equal((await victim.send("/dashboard/keys")).status, 200, "signed in");
});

Deno.test("dashboard: session cookies are HttpOnly and SameSite, the session one lasting 7 days; Secure except on plain-http loopback", async () => {
  await using s = await startServer();
  const r = await fetch(s.url + "/dashboard/signup");
  const formCookie = r.headers.getSetCookie().find((c) => c.startsWith("shelf_form=")) ?? "";
  const token = /name="_csrf" value="([0-9a-f]+)"/.exec(await r.text())![1];
  const signed = await fetch(s.url + "/dashboard/signup", {
    method: "POST",
    redirect: "manual",
    headers: {
      cookie: formCookie.split(";")[0],
      "content-type": "application/x-www-form-urlencoded",
    },
    body: new URLSearchParams({
      _csrf: token,
      email: "cookie@example.com",
      password: "correct horse battery",
    }),
  });
  await signed.body?.cancel();
  assert.equal(signed.status, 303);
  const session = signed.headers.getSetCookie().find((c) => c.startsWith("shelf_session=")) ?? "";
  for (const c of [formCookie, session]) {
    assert.match(c, /; HttpOnly/i, c);
    assert.match(c, /; SameSite=Lax/i, c);
    assert.match(c, /; Path=\/dashboard/i, c);
    assert.doesNotMatch(
      c,
      /; Secure/i,
      "plain http on 127.0.0.1 (the tests) cannot keep Secure cookies",
    );
  }
  assert.match(session, /^shelf_session=[0-9a-f]{64};/);
  // The cookie lives as long as the session it holds: 7 days (README "Sessions and cookies").
  assert.match(session, /; Max-Age=604800(;|$)/i, session);
  const stored = [];
  for await (const e of s.kv.list({ prefix: ["session"] })) stored.push(JSON.stringify(e));
  assert.equal(stored.length, 1);
  assert.ok(
    !stored[0].includes(/^shelf_session=([0-9a-f]+)/.exec(session)![1]),
    "the store keeps a digest, not the token",
  );

  const kv = await Deno.openKv(":memory:");
  try {
    const { app } = createApp({
      kv,
      plans: builtinPlans(),
      clock: systemClock,
      dataSource: { fetch: () => Promise.resolve({}) },
    });
    const remote = await app.request("https://shelf.example.com/dashboard/signin");
    await remote.body?.cancel();
    assert.match(
      remote.headers.getSetCookie().join("\n"),
      /shelf_form=[0-9a-f]+;.*; Secure/i,
      "Secure off loopback",
    );
  } finally {
    kv.close();
  }
});

Deno.test("dashboard: passwords are scrypt digests; sign in, wrong password, sign out ends the session", async () => {
  await using s = await startServer();
  const b = browser(s.url);
  const email = await signUp(b);
  const id = (await s.accounts.idByEmail(email))!;
  const cred = (await s.kv.get<Record<string, unknown>>(["credential", id])).value!;
  assert.equal(cred.algo, "scrypt");
  assert.match(String(cred.salt), /^[0-9a-f]{32}$/);
  assert.ok(!JSON.stringify(cred).includes("correct horse"));

  const session = b.jar.get("shelf_session");
  const out = await b.send("/dashboard/signout", {
    form: { _csrf: (await b.send("/dashboard/keys")).csrf },
  });
  assert.equal(out.status, 303);
  assert.equal(b.jar.has("shelf_session"), false);
  b.jar.set("shelf_session", session!);
  assert.equal(
    (await b.send("/dashboard/keys")).status,
    303,
    "the old session no longer opens the dashboard",
  );
  b.jar.delete("shelf_session");

  const form = await b.send("/dashboard/signin");
  const wrong = await b.send("/dashboard/signin", {
    form: { _csrf: form.csrf, email, password: "wrong password!" },
  });
  assert.equal(wrong.status, 401);
  assert.match(wrong.text, /Wrong email or password/);
  const unknown = await b.send("/dashboard/signin", {
    form: { _csrf: form.csrf, email: "nobody@example.com", password: "whatever123" },
  });
  assert.equal(unknown.status, 401);
  const right = await b.send("/dashboard/signin", {
    form: { _csrf: form.csrf, email: email.toUpperCase(), password: "correct horse battery" },
  });
  assert.equal(right.status, 303);
  assert.equal((await b.send("/dashboard/keys")).status, 200);
});

Deno.test("dashboard: SIGNUP=closed refuses sign-up", async () => {
  await using s = await startServer({ signup: "closed" });
  const b = browser(s.url);
  const page = await b.send("/dashboard/signup");
  assert.equal(page.status, 403);
  assert.match(page.text, /Sign-up is closed/);
  const form = await b.send("/dashboard/signin");
  const r = await b.send("/dashboard/signup", {
    form: { _csrf: form.csrf, email: "closed@example.com", password: "correct horse battery" },
  });
  assert.equal(r.status, 403);
  assert.equal(await s.accounts.idByEmail("closed@example.com"), null);
});

Deno.test("dashboard: the key limit is refused with a clear message; a key of another account cannot be revoked", async () => {
  await using s = await startServer();
  const b = browser(s.url);
  await signUp(b);
  const keys = await b.send("/dashboard/keys");
  assert.equal(
    (await b.send("/dashboard/keys", { form: { _csrf: keys.csrf, mode: "live" } })).status,
    200,
  );
  const second = await b.send("/dashboard/keys", { form: { _csrf: keys.csrf, mode: "test" } });
  assert.equal(second.status, 409);
  assert.match(second.text, /the free plan allows 1 active key; revoke one first/);
  assert.doesNotMatch(second.text, /shelf_test_[0-9a-f]{48}/);

  const other = await s.account("free");
  const r = await b.send(`/dashboard/keys/${other.keyId}/revoke`, { form: { _csrf: keys.csrf } });
  assert.equal(r.status, 404);
  const call = await s.get("/v1/products/offers?asin=B07H57DNVV", other.key);
  await call.body?.cancel();
  assert.equal(call.status, 200, "the other account's key still works");
});

Deno.test("dashboard: odd input is a clear refusal, never an unhandled error", async () => {
  await using s = await startServer();
  const b = browser(s.url);
  await signUp(b);
  const keys = await b.send("/dashboard/keys");
  // A form that cannot be read (multipart without its boundary) is a 400 page, before any token.
  for (const path of ["/dashboard/signin", "/dashboard/keys", "/dashboard/signout"]) {
    const r = await b.send(path, {
      method: "POST",
      headers: { "content-type": "multipart/form-data" },
      body: "abc",
    });
    assert.equal(r.status, 400, path);
    assert.match(r.headers.get("content-type") ?? "", /text\/html/);
    assert.match(r.text, /The form could not be read/);
  }
  // An email too long to be anyone's is a wrong sign-in, not a failed store read.
  const anon = browser(s.url);
  const form = await anon.send("/dashboard/signin");
  const long = await anon.send("/dashboard/signin", {
    form: { _csrf: form.csrf, email: "a".repeat(3000) + "@example.com", password: "whatever1234" },
  });
  assert.equal(long.status, 401);
  // Key ids named like Object's own properties are no keys of the account.
  for (const id of ["hasOwnProperty", "constructor", "__proto__", "toString"]) {
    const shown = await b.send(`/dashboard/keys/${id}/revoke`);
    assert.equal(shown.status, 404, `GET ${id}`);
    const posted = await b.send(`/dashboard/keys/${id}/revoke`, { form: { _csrf: keys.csrf } });
    assert.equal(posted.status, 404, `POST ${id}`);
    assert.match(posted.text, /No such key on this account/);
  }
  assert.deepEqual(s.errors, [], "no unhandled error was logged");
});

Deno.test("dashboard: a form posted from another port of this host name is refused, the Origin's port counts", async () => {
  await using s = await startServer();
  const email = await signUp(browser(s.url));
  const served = new URL(s.url);
  const port = Number(served.port);
  const otherPort = `${served.protocol}//${served.hostname}:${
    port === 65535 ? port - 1 : port + 1
  }`;
  // A browser without fetch metadata: only the Origin tells where the form came from.
  const victim = browser(s.url);
  const form = {
    _csrf: (await victim.send("/dashboard/signin")).csrf,
    email,
    password: "correct horse battery",
  };
  const foreign = await victim.send("/dashboard/signin", { form, headers: { origin: otherPort } });
  assert.equal(foreign.status, 403, `Origin ${otherPort} posting to ${served.host}`);
  assert.match(foreign.text, /another site/);
  assert.equal(victim.jar.has("shelf_session"), false, "not signed in");
  const own = await victim.send("/dashboard/signin", { form, headers: { origin: served.origin } });
  assert.equal(own.status, 303, "the same host and port is the dashboard's own form");
});

Deno.test("dashboard: X-Forwarded-Host names the served host only under TRUST_PROXY", async () => {
  const post = async (trustProxy: boolean) => {
    await using s = await startServer({ trustProxy });
    const email = await signUp(browser(s.url));
    const b = browser(s.url);
    const csrf = (await b.send("/dashboard/signin")).csrf;
    const r = await b.send("/dashboard/signin", {
      form: { _csrf: csrf, email, password: "correct horse battery" },
      headers: { origin: "http://evil.example", "x-forwarded-host": "evil.example" },
    });
    return r.status;
  };
  assert.equal(await post(false), 403, "no proxy trusted: the header is anyone's to send");
  assert.equal(await post(true), 303, "behind a trusted proxy: the host the proxy was asked for");
});

Deno.test("dashboard: a form cookie that is not a token of ours is replaced by a fresh one", async () => {
  await using s = await startServer();
  for (const planted of ["x", "0".repeat(31), "A".repeat(32), "0".repeat(33)]) {
    const r = await fetch(`${s.url}/dashboard/signin`, {
      headers: { cookie: `shelf_form=${planted}` },
    });
    const html = await r.text();
    const set = r.headers.getSetCookie().find((c) => c.startsWith("shelf_form=")) ?? "";
    const fresh = /^shelf_form=([0-9a-f]{32});/.exec(set)?.[1];
    assert.ok(fresh, `${planted}: a fresh token is set (${set})`);
    assert.ok(html.includes(`name="_csrf" value="${fresh}"`), `${planted}: the form carries it`);
    assert.ok(!html.includes(`value="${planted}"`), `${planted}: not the planted value`);
  }
  // A well-formed token is kept: no new cookie, the form carries it.
  const kept = "0123456789abcdef".repeat(2);
  const r = await fetch(`${s.url}/dashboard/signin`, { headers: { cookie: `shelf_form=${kept}` } });
  const html = await r.text();
  assert.equal(r.headers.getSetCookie().find((c) => c.startsWith("shelf_form=")), undefined);
  assert.ok(html.includes(`name="_csrf" value="${kept}"`));
});
