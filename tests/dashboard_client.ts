import assert from "node:assert/strict";
import { startServer } from "./test_server.ts";
import { eventually, startSmtpSink } from "./smtp_sink.ts";
import type { AccountState } from "../metering/account_state.ts";
/** A minimal browser for dashboard tests over real HTTP. */
/** A cookie jar client for the dashboard: follows no redirects, keeps cookies, reads form tokens. */
export function browser(base: string) {
  const jar = new Map<string, string>();
  return {
    jar,
    async send(path: string, init: RequestInit & { form?: Record<string, string> } = {}) {
      const headers = new Headers(init.headers);
      if (jar.size) headers.set("cookie", [...jar].map(([k, v]) => `${k}=${v}`).join("; "));
      let body = init.body;
      if (init.form) {
        body = new URLSearchParams(init.form);
        headers.set("content-type", "application/x-www-form-urlencoded");
      }
      const r = await fetch(base + path, {
        ...init,
        headers,
        body,
        redirect: "manual",
        method: init.method ?? (init.form ? "POST" : "GET"),
      });
      for (const c of r.headers.getSetCookie()) {
        const [pair] = c.split(";");
        const [k, v] = pair.split("=");
        if (v === "" || /max-age=0/i.test(c)) jar.delete(k);
        else jar.set(k, v);
      }
      const text = await r.text();
      return {
        status: r.status,
        headers: r.headers,
        text,
        csrf: /name="_csrf" value="([0-9a-f]+)"/.exec(text)?.[1] ?? "",
      };
    },
  };
}

export type Browser = ReturnType<typeof browser>;

/** The password the dashboard tests sign up with. */
export const PASSWORD = "correct horse battery";

/** An open sign-up for `email` in `b`, which it leaves signed in. */
export async function signUpOpen(b: Browser, email: string) {
  const page = await b.send("/dashboard/signup");
  const r = await b.send("/dashboard/signup", {
    form: { _csrf: page.csrf, email, password: PASSWORD },
  });
  assert.equal(r.status, 303);
}

export async function signIn(b: Browser, email: string, password = PASSWORD) {
  const page = await b.send("/dashboard/signin");
  return await b.send("/dashboard/signin", { form: { _csrf: page.csrf, email, password } });
}

/** An open sign-up for `email`, and its owner's browser, signed in (a new device). */
export async function signedUpAndIn(url: string, email: string): Promise<Browser> {
  await signUpOpen(browser(url), email);
  const owner = browser(url);
  assert.equal((await signIn(owner, email)).status, 303);
  return owner;
}

/** The token of the `path` link in a raw mail (quoted-printable unfolded). */
export function linkIn(raw: string, path: string): string {
  const unfolded = raw.replace(/=\r?\n/g, "").replace(/=3D/g, "=");
  const m = new RegExp(`https?://[^\\s]+${path}\\?token=([0-9a-f]{64})`).exec(unfolded);
  assert.ok(m, `a ${path} link in the mail`);
  return m[1];
}

/** A mail sink, a server with open sign-up mailing through it, and `email`'s signed-in owner. */
export async function withAlertsOwner(
  email: string,
  f: (t: {
    smtp: Awaited<ReturnType<typeof startSmtpSink>>;
    s: Awaited<ReturnType<typeof startServer>>;
    email: string;
    owner: Browser;
    account: () => Promise<AccountState>;
    /** Where the account's alerts go now (its confirmed address), or null. */
    alertsTo: () => Promise<string | null>;
  }) => Promise<void>,
): Promise<void> {
  await using smtp = await startSmtpSink();
  await using s = await startServer({ signup: "open", smtp: { url: smtp.url } });
  const owner = await signedUpAndIn(s.url, email);
  const id = (await s.accounts.idByEmail(email))!;
  const account = () => s.accounts.get(id);
  const alertsTo = async () => (await account()).alerts?.email ?? null;
  await f({ smtp, s, email, owner, account, alertsTo });
}

/** Asks for a reset link for `email`; the `n`th mail the sink gets holds it. */
export async function askReset(
  url: string,
  smtp: Awaited<ReturnType<typeof startSmtpSink>>,
  email: string,
  n: number,
) {
  const b = browser(url);
  const f = await b.send("/dashboard/forgot");
  await b.send("/dashboard/forgot", { form: { _csrf: f.csrf, email } });
  await eventually(`reset mail ${n}`, () => smtp.received.length === n);
  return linkIn(smtp.received[n - 1].raw, "/dashboard/reset");
}

/** Sets `password` through the reset link `token`: the status of the form's answer, or of the link. */
export async function resetWith(url: string, token: string, password: string) {
  const b = browser(url);
  const page = await b.send(`/dashboard/reset?token=${token}`);
  if (page.status !== 200) return page.status;
  return (await b.send("/dashboard/reset", { form: { _csrf: page.csrf, token, password } }))
    .status;
}
