/**
 * Signing in and out, sign-up (SIGNUP: closed, verify, open), the confirmation link, "forgot
 * password", the reset link and the password change. Sign-up in verify mode and "forgot
 * password" answer the same page, after the same work, whether or not the address has an
 * account: what differs (a link stored, a mail sent) happens after the answer.
 *
 * In verify mode the password is chosen on the confirmation page, by whoever holds the mailed
 * link, not on the sign-up form: otherwise anyone could sign up someone else's address with a
 * password of their own, and if its owner confirmed, sign in to the owner's new account.
 */
import type { Context, Hono } from "hono";
import type { Deps } from "../deps.ts";
import { AccountError, mailableEmail, normalizeEmail } from "../../metering/accounts.ts";
import { SIGNUP_PLAN } from "../../metering/plans.ts";
import { KV } from "../../metering/kv_layout.ts";
import {
  type Credential,
  hashPassword,
  passwordProblem,
  PasswordWorkBusy,
  readCredential,
  verifyPassword,
} from "../../metering/passwords.ts";
import { createSession, deleteSession } from "../../metering/sessions.ts";
import {
  clearAttempts,
  reserveAttempt,
  reserveSessionAttempt,
} from "../../metering/signin_lockout.ts";
import { knownDevice, rememberDevice } from "../../metering/sign_in_devices.ts";
import { reserveSignup } from "../../metering/signup_limit.ts";
import type { Client } from "../../metering/window_slots.ts";
import { clientAddress } from "../client_address.ts";
import { issueToken, readToken } from "../../metering/email_tokens.ts";
import { issueResetToken, type PendingReset } from "../../metering/password_reset.ts";
import { alreadyRegisteredMail, resetMail, signupMail } from "../../mail/account_mail.ts";
import {
  clearSessionCookie,
  currentSession,
  deviceCookie,
  formToken,
  setDeviceCookie,
  setSessionCookie,
} from "./guard.ts";
import {
  CheckMailPage,
  ForgotPage,
  LinkInvalidPage,
  PasswordPage,
  ResetPage,
  SignInPage,
  SignUpPage,
  VerifyPage,
} from "./auth_pages.tsx";
import type { SignedInHandler } from "./signed_in.ts";
import type { AccountMails } from "./account_mails.ts";
import { queryValue } from "../query_params.ts";

interface PendingSignup {
  email: string;
}

const CHECK_SIGNUP =
  "If the address can get an account, a confirmation link is on its way. Open it within 24 hours.";
const CHECK_RESET =
  "If an account uses that address, a link to choose a new password is on its way. It works for an hour.";
const BUSY = "Too many sign-ins at once; try again in a moment.";

export function authRoutes(
  app: Hono,
  deps: Deps,
  signedIn: SignedInHandler,
  mails: AccountMails,
): void {
  const { accounts, kv, clock } = deps;
  const form = (c: Context) => formToken(c, deps);

  const mailLater = mails.later;
  const mayMail = mails.may;
  const resetToken = (id: string, email: string) => issueResetToken(kv, id, email, clock.now());

  const startSession = async (
    c: Context,
    accountId: string,
    epoch: number,
    to = "/dashboard/keys",
  ) => {
    const { token } = await createSession(kv, accountId, clock.now(), epoch);
    setSessionCookie(c, deps, token);
    return c.redirect(to, 303);
  };

  app.get(
    "/dashboard",
    async (c) =>
      c.redirect((await currentSession(c, deps)) ? "/dashboard/keys" : "/dashboard/signin", 303),
  );

  app.get("/dashboard/signin", async (c) => {
    if (await currentSession(c, deps)) return c.redirect("/dashboard/keys", 303);
    const notice = queryValue(c.req.url, "signed_out")
      ? "Signed out."
      : queryValue(c.req.url, "reset")
      ? "Password changed. Sign in with the new one."
      : undefined;
    return c.html(<SignInPage csrf={form(c)} notice={notice} />);
  });

  app.post("/dashboard/signin", async (c) => {
    const body = await c.req.parseBody();
    const email = String(body.email ?? "").trim().toLowerCase();
    const password = String(body.password ?? "");
    const wrong = () =>
      c.html(<SignInPage csrf={form(c)} email={email} error="Wrong email or password." />, 401);
    if (!email) return wrong();
    // The attempt takes its slot before the password is checked, so a burst cannot outrun the count.
    const client = clientAddress(c, deps.trustProxy);
    const id = await accounts.idByEmail(email);
    const credential = id ? await readCredential(kv, id) : null;
    const deviceToken = deviceCookie(c, deps);
    const epoch = credential?.epoch ?? 0;
    const device = await knownDevice(kv, deviceToken, email, epoch, clock.now());
    const slot = await reserveAttempt(kv, email, client, clock.now(), device);
    if (slot !== "ok" && slot !== "device") {
      const error = slot === "email"
        ? "Too many failed attempts. Wait 15 minutes and try again."
        : slot === "device_spent"
        ? "Too many sign-ins from this browser. Wait 15 minutes and try again."
        : "Too many sign-in attempts from your network. Wait 15 minutes and try again.";
      return c.html(<SignInPage csrf={form(c)} email={email} error={error} />, 429);
    }
    let ok: boolean;
    try {
      ok = await verifyPassword(password, credential, client);
    } catch (e) {
      if (!(e instanceof PasswordWorkBusy)) throw e;
      return c.html(<SignInPage csrf={form(c)} email={email} error={BUSY} />, 503);
    }
    if (!ok || !id || !credential) return wrong();
    if (slot === "ok") await clearAttempts(kv, email);
    const kept = await rememberDevice(kv, email, device ? deviceToken! : null, clock.now(), epoch);
    if (kept) setDeviceCookie(c, deps, kept);
    return await startSession(c, id, epoch);
  });

  app.get("/dashboard/signup", async (c) => {
    if (await currentSession(c, deps)) return c.redirect("/dashboard/keys", 303);
    const open = deps.signup !== "closed";
    return c.html(
      <SignUpPage
        csrf={form(c)}
        open={open}
        verify={deps.signup === "verify"}
        plan={deps.plans.get(SIGNUP_PLAN)}
      />,
      open ? 200 : 403,
    );
  });

  app.post("/dashboard/signup", async (c) => {
    if (deps.signup === "closed") return c.html(<SignUpPage csrf={form(c)} open={false} />, 403);
    const body = await c.req.parseBody();
    const given = String(body.email ?? "");
    const password = String(body.password ?? "");
    const verify = deps.signup === "verify";
    const again = (error: string, status: 409 | 422 | 429 | 503) =>
      c.html(
        <SignUpPage
          csrf={form(c)}
          open
          verify={verify}
          email={given}
          error={error}
          plan={deps.plans.get(SIGNUP_PLAN)}
        />,
        status,
      );
    const email = mailableEmail(given);
    if (!email) {
      // Checked before any mail: a confirmation went to root@localhost (probe FB).
      return normalizeEmail(given)
        ? again("Mail cannot go to that host: enter an address on the public internet.", 422)
        : again("Enter a valid email address.", 422);
    }
    if (verify) {
      // No account before the address is confirmed: no credits, no keys, no squatting. Past the
      // address's or the client's mails for the hour, nothing is sent, and the answer is the same.
      const known = await accounts.idByEmail(email);
      if (await mayMail(c, email)) {
        mailLater("sign-up mail", async () => {
          if (known) {
            return alreadyRegisteredMail(email, deps.publicUrl, await resetToken(known, email));
          }
          const token = await issueToken<PendingSignup>(kv, "signup", { email }, clock.now());
          return signupMail(email, deps.publicUrl, token);
        });
      }
      return c.html(<CheckMailPage title="Check your mail" message={CHECK_SIGNUP} />);
    }
    const problem = passwordProblem(password);
    if (problem) return again(problem, 422);
    // The client's sign-up is counted before its password is hashed (see signup_limit.ts).
    const client = clientAddress(c, deps.trustProxy);
    if (!(await reserveSignup(kv, client, clock.now()))) {
      return again("Too many sign-ups from your network. Try again in an hour.", 429);
    }
    const credential = await newCredential(password, clock.now(), null, client);
    if (!credential) return again(BUSY, 503);
    try {
      const account = await accounts.create(
        email,
        SIGNUP_PLAN,
        (op, a) => op.set(KV.credential(a.id), credential),
      );
      return await startSession(c, account.id, credential.epoch ?? 0);
    } catch (e) {
      if (!(e instanceof AccountError)) throw e;
      if (e.code === "email_taken") {
        return again("An account with this email exists. Sign in instead.", 409);
      }
      if (e.code === "invalid_email") return again("Enter a valid email address.", 422);
      throw e; // not the address's fault: told as such, it was told to fix a valid one (probe DG)
    }
  });

  app.get("/dashboard/verify", async (c) => {
    const token = queryValue(c.req.url, "token") ?? "";
    const pending = await readToken<PendingSignup>(kv, "signup", token, clock.now());
    // An address that got an account since the link was sent makes the link void, as the form
    // would then say (probe GL: it showed the form, then refused the password typed into it).
    if (!pending || await accounts.idByEmail(pending.payload.email)) {
      return c.html(<LinkInvalidPage />, 400);
    }
    return c.html(<VerifyPage csrf={form(c)} token={token} email={pending.payload.email} />);
  });

  app.post("/dashboard/verify", async (c) => {
    const body = await c.req.parseBody();
    const token = String(body.token ?? "");
    const password = String(body.password ?? "");
    const pending = await readToken<PendingSignup>(kv, "signup", token, clock.now());
    if (!pending) return c.html(<LinkInvalidPage />, 400);
    const { email } = pending.payload;
    const again = (error: string, status: 422 | 503) =>
      c.html(<VerifyPage csrf={form(c)} token={token} email={email} error={error} />, status);
    const problem = passwordProblem(password);
    if (problem) return again(problem, 422);
    const credential = await newCredential(
      password,
      clock.now(),
      null,
      clientAddress(c, deps.trustProxy),
    );
    if (!credential) return again(BUSY, 503);
    try {
      // One commit creates the account, stores its password and spends the link.
      const account = await accounts.create(email, SIGNUP_PLAN, (op, a) => {
        op.set(KV.credential(a.id), credential);
        pending.spend(op);
      });
      return await startSession(c, account.id, credential.epoch ?? 0);
    } catch (e) {
      if (!(e instanceof AccountError)) throw e;
      return c.html(<LinkInvalidPage />, 400); // spent meanwhile, or the address got an account
    }
  });

  app.get("/dashboard/forgot", (c) => c.html(<ForgotPage csrf={form(c)} mail={!!deps.mailer} />));

  app.post("/dashboard/forgot", async (c) => {
    if (!deps.mailer) return c.html(<ForgotPage csrf={form(c)} mail={false} />);
    const email = normalizeEmail((await c.req.parseBody()).email);
    const id = email ? await accounts.idByEmail(email) : null;
    if (email && (await mayMail(c, email)) && id) {
      mailLater(
        "reset mail",
        async () => resetMail(email, deps.publicUrl, await resetToken(id, email)),
      );
    }
    return c.html(<CheckMailPage title="Check your mail" message={CHECK_RESET} />);
  });

  /**
   * A reset link's token and the credential it may replace, or null. A reset or password change
   * since the link was issued voids it: a link left in a mailbox must not outlive the password it
   * was asked for. Checked when the link is opened too, where a dead link showed the form and
   * refused the password typed into it (probe GK).
   */
  const liveReset = async (token: string) => {
    const pending = await readToken<PendingReset>(kv, "reset", token, clock.now());
    if (!pending) return null;
    const current = await kv.get<Credential>(KV.credential(pending.payload.account_id));
    return (current.value?.epoch ?? 0) === pending.payload.epoch ? { pending, current } : null;
  };

  app.get("/dashboard/reset", async (c) => {
    const token = queryValue(c.req.url, "token") ?? "";
    if (!(await liveReset(token))) return c.html(<LinkInvalidPage />, 400);
    return c.html(<ResetPage csrf={form(c)} token={token} />);
  });

  app.post("/dashboard/reset", async (c) => {
    const body = await c.req.parseBody();
    const token = String(body.token ?? "");
    const password = String(body.password ?? "");
    const live = await liveReset(token);
    if (!live) return c.html(<LinkInvalidPage />, 400);
    const { pending, current } = live;
    const { account_id, email } = pending.payload;
    const problem = passwordProblem(password);
    if (problem) return c.html(<ResetPage csrf={form(c)} token={token} error={problem} />, 422);
    const credential = await newCredential(
      password,
      clock.now(),
      current.value,
      clientAddress(c, deps.trustProxy),
    );
    if (!credential) return c.html(<ResetPage csrf={form(c)} token={token} error={BUSY} />, 503);
    // The new epoch ends every session of the account; the link is spent in the same commit,
    // which fails if the password changed meanwhile.
    const r = await pending.spend(kv.atomic()).check(current)
      .set(KV.credential(account_id), credential).commit();
    if (!r.ok) return c.html(<LinkInvalidPage />, 400);
    await clearAttempts(kv, email);
    clearSessionCookie(c, deps);
    return c.redirect("/dashboard/signin?reset=1", 303);
  });

  app.post("/dashboard/signout", async (c) => {
    const found = await currentSession(c, deps);
    if (found) await deleteSession(kv, found.token);
    clearSessionCookie(c, deps);
    return c.redirect("/dashboard/signin?signed_out=1", 303);
  });

  app.get("/dashboard/password", signedIn((c, s) => c.html(<PasswordPage viewer={s.viewer} />)));

  app.post(
    "/dashboard/password",
    signedIn(async (c, s) => {
      const body = await c.req.parseBody();
      const current = String(body.current ?? "");
      const password = String(body.password ?? "");
      const again = (error: string, status: 401 | 409 | 422 | 429 | 503) =>
        c.html(<PasswordPage viewer={s.viewer} error={error} />, status);
      const problem = passwordProblem(password);
      if (problem) return again(problem, 422);
      // Signed in already: only this session's own count applies.
      if (!(await reserveSessionAttempt(kv, s.token, clock.now()))) {
        return again("Too many failed attempts. Wait 15 minutes and try again.", 429);
      }
      const stored = await kv.get<Credential>(KV.credential(s.account.id));
      const old = stored.value;
      try {
        const client = clientAddress(c, deps.trustProxy);
        if (!old || !(await verifyPassword(current, old, client))) {
          return again("The current password is wrong.", 401);
        }
        const credential = await hashPassword(password, clock.now(), old, client);
        // Checked: a reset landing meanwhile must not be overwritten by a change decided before it.
        const r = await kv.atomic().check(stored).set(KV.credential(s.account.id), credential)
          .commit();
        if (!r.ok) return again("The password changed meanwhile. Sign in again.", 409);
        await deleteSession(kv, s.token);
        // Every other browser is signed out by the new epoch; this one gets a fresh session.
        return await startSession(
          c,
          s.account.id,
          credential.epoch ?? 0,
          "/dashboard/settings?password=1",
        );
      } catch (e) {
        if (!(e instanceof PasswordWorkBusy)) {
          throw e;
        }
        return again(BUSY, 503);
      }
    }),
  );
}

/** A new credential, or null when too much password work is waiting (the caller answers 503). */
async function newCredential(
  password: string,
  now: number,
  previous: Credential | null | undefined,
  client: Client,
): Promise<Credential | null> {
  try {
    return await hashPassword(password, now, previous, client);
  } catch (e) {
    if (e instanceof PasswordWorkBusy) return null;
    throw e;
  }
}
