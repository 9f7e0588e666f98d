/**
 * Signing in and out, sign-up (SIGNUP: closed, verify, open), the confirmation link, "forgot
 * password", the reset link and the password change. Sign-up in verify mode and "forgot
 * password" answer the same page whether or not the address has an account; the mail (sent in
 * the background, so its time shows in no answer) is what differs.
 */
import type { Context, Hono } from "hono";
import type { Deps } from "../deps.ts";
import { AccountError, normalizeEmail } from "../../metering/accounts.ts";
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
import { clearAttempts, reserveAttempt } from "../../metering/signin_lockout.ts";
import { reserveAccountMail } from "../../metering/account_mail_limit.ts";
import { clientAddress } from "../client_address.ts";
import { issueToken, readToken } from "../../metering/email_tokens.ts";
import { type Mail, sendMail } from "../../mail/smtp.ts";
import { alreadyRegisteredMail, resetMail, signupMail } from "../../mail/account_mail.ts";
import { clearSessionCookie, currentSession, formToken, setSessionCookie } from "./guard.ts";
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

interface PendingSignup {
  email: string;
  credential: Credential;
}

interface PendingReset {
  account_id: string;
  email: string;
}

const CHECK_SIGNUP =
  "If the address can get an account, a confirmation link is on its way. Open it within 24 hours.";
const CHECK_RESET =
  "If an account uses that address, a link to choose a new password is on its way. It works for an hour.";
const BUSY = "Too many sign-ins at once; try again in a moment.";

export function authRoutes(app: Hono, deps: Deps, signedIn: SignedInHandler): void {
  const { accounts, kv, clock } = deps;
  const form = (c: Context) => formToken(c, deps);

  /** Mails in the background: an answer must not wait for (or reveal) the mail server. */
  const mail = (m: Mail) => {
    if (!deps.mailer) return;
    sendMail(deps.mailer, m).catch((e) =>
      deps.log.error("account mail failed", e instanceof Error ? e.message : e)
    );
  };

  /**
   * Whether this client may have `email` sent one more account mail this hour. Asked for every
   * well-formed address, whether it has an account or not, so that the answer's time tells
   * neither.
   */
  const mayMail = async (c: Context, email: string) => {
    const client = clientAddress(c, deps.trustProxy);
    if (await reserveAccountMail(kv, email, client, clock.now())) return true;
    deps.log.error("account mail not sent: the address or client has had its mails for this hour");
    return false;
  };

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
    const notice = c.req.query("signed_out")
      ? "Signed out."
      : c.req.query("reset")
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
    const slot = await reserveAttempt(kv, email, clientAddress(c, deps.trustProxy), clock.now());
    if (slot !== "ok") {
      const error = slot === "email"
        ? "Too many failed attempts. Wait 15 minutes and try again."
        : "Too many sign-in attempts from your network. Wait 15 minutes and try again.";
      return c.html(<SignInPage csrf={form(c)} email={email} error={error} />, 429);
    }
    const id = await accounts.idByEmail(email);
    const credential = id ? await readCredential(kv, id) : null;
    let ok: boolean;
    try {
      ok = await verifyPassword(password, credential);
    } catch (e) {
      if (!(e instanceof PasswordWorkBusy)) throw e;
      return c.html(<SignInPage csrf={form(c)} email={email} error={BUSY} />, 503);
    }
    if (!ok || !id || !credential) return wrong();
    await clearAttempts(kv, email);
    return await startSession(c, id, credential.epoch ?? 0);
  });

  app.get("/dashboard/signup", async (c) => {
    if (await currentSession(c, deps)) return c.redirect("/dashboard/keys", 303);
    const open = deps.signup !== "closed";
    return c.html(
      <SignUpPage csrf={form(c)} open={open} verify={deps.signup === "verify"} />,
      open ? 200 : 403,
    );
  });

  app.post("/dashboard/signup", async (c) => {
    if (deps.signup === "closed") return c.html(<SignUpPage csrf={form(c)} open={false} />, 403);
    const body = await c.req.parseBody();
    const given = String(body.email ?? "");
    const password = String(body.password ?? "");
    const again = (error: string, status: 409 | 422 | 503) =>
      c.html(
        <SignUpPage
          csrf={form(c)}
          open
          verify={deps.signup === "verify"}
          email={given}
          error={error}
        />,
        status,
      );
    const email = normalizeEmail(given);
    if (!email) return again("Enter a valid email address.", 422);
    const problem = passwordProblem(password);
    if (problem) return again(problem, 422);
    let credential: Credential;
    try {
      credential = await hashPassword(password, clock.now());
    } catch (e) {
      if (!(e instanceof PasswordWorkBusy)) throw e;
      return again(BUSY, 503);
    }
    if (deps.signup === "verify") {
      // No account before the address is confirmed: no credits, no keys, no squatting. Past the
      // address's or the client's mails for the hour, nothing is sent, and the answer is the same.
      const known = await accounts.idByEmail(email);
      if (await mayMail(c, email)) {
        if (known) {
          mail(alreadyRegisteredMail(email, deps.publicUrl));
        } else {
          const token = await issueToken<PendingSignup>(
            kv,
            "signup",
            { email, credential },
            clock.now(),
          );
          mail(signupMail(email, deps.publicUrl, token));
        }
      }
      return c.html(<CheckMailPage title="Check your mail" message={CHECK_SIGNUP} />);
    }
    try {
      const account = await accounts.create(
        email,
        "free",
        (op, a) => op.set(KV.credential(a.id), credential),
      );
      return await startSession(c, account.id, 0);
    } catch (e) {
      if (!(e instanceof AccountError)) throw e;
      if (e.code === "email_taken") {
        return again("An account with this email exists. Sign in instead.", 409);
      }
      return again("Enter a valid email address.", 422);
    }
  });

  app.get("/dashboard/verify", async (c) => {
    const token = c.req.query("token") ?? "";
    const pending = await readToken<PendingSignup>(kv, "signup", token, clock.now());
    if (!pending) return c.html(<LinkInvalidPage />, 400);
    return c.html(<VerifyPage csrf={form(c)} token={token} email={pending.payload.email} />);
  });

  app.post("/dashboard/verify", async (c) => {
    const token = String((await c.req.parseBody()).token ?? "");
    const pending = await readToken<PendingSignup>(kv, "signup", token, clock.now());
    if (!pending) return c.html(<LinkInvalidPage />, 400);
    try {
      // One commit creates the account, stores its password and spends the link.
      const account = await accounts.create(pending.payload.email, "free", (op, a) => {
        op.set(KV.credential(a.id), pending.payload.credential);
        pending.spend(op);
      });
      return await startSession(c, account.id, pending.payload.credential.epoch ?? 0);
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
      const token = await issueToken<PendingReset>(
        kv,
        "reset",
        { account_id: id, email },
        clock.now(),
      );
      mail(resetMail(email, deps.publicUrl, token));
    }
    return c.html(<CheckMailPage title="Check your mail" message={CHECK_RESET} />);
  });

  app.get("/dashboard/reset", async (c) => {
    const token = c.req.query("token") ?? "";
    if (!(await readToken<PendingReset>(kv, "reset", token, clock.now()))) {
      return c.html(<LinkInvalidPage />, 400);
    }
    return c.html(<ResetPage csrf={form(c)} token={token} />);
  });

  app.post("/dashboard/reset", async (c) => {
    const body = await c.req.parseBody();
    const token = String(body.token ?? "");
    const password = String(body.password ?? "");
    const pending = await readToken<PendingReset>(kv, "reset", token, clock.now());
    if (!pending) return c.html(<LinkInvalidPage />, 400);
    const problem = passwordProblem(password);
    if (problem) return c.html(<ResetPage csrf={form(c)} token={token} error={problem} />, 422);
    const { account_id, email } = pending.payload;
    let credential: Credential;
    try {
      credential = await hashPassword(password, clock.now(), await readCredential(kv, account_id));
    } catch (e) {
      if (!(e instanceof PasswordWorkBusy)) throw e;
      return c.html(<ResetPage csrf={form(c)} token={token} error={BUSY} />, 503);
    }
    // The new epoch ends every session of the account; the link is spent in the same commit.
    const r = await pending.spend(kv.atomic()).set(KV.credential(account_id), credential).commit();
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
      const again = (error: string, status: 401 | 422 | 429 | 503) =>
        c.html(<PasswordPage viewer={s.viewer} error={error} />, status);
      const problem = passwordProblem(password);
      if (problem) return again(problem, 422);
      // Signed in already: only the account's own count applies.
      if ((await reserveAttempt(kv, s.account.email, null, clock.now())) !== "ok") {
        return again("Too many failed attempts. Wait 15 minutes and try again.", 429);
      }
      const old = await readCredential(kv, s.account.id);
      try {
        if (!old || !(await verifyPassword(current, old))) {
          return again("The current password is wrong.", 401);
        }
        const credential = await hashPassword(password, clock.now(), old);
        await kv.set(KV.credential(s.account.id), credential);
        await clearAttempts(kv, s.account.email);
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
