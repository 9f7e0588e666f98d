/**
 * The dashboard at /dashboard: sign up, sign in and out, keys, usage and alert settings, rendered
 * on the server with Hono's JSX; plain forms, no client-side build. It changes accounts through
 * the same Accounts functions as the admin API and the CLI.
 *
 * @example
 * dashboardRoutes(app, deps); // in createApp
 */
import type { Context, Hono } from "hono";
import type { Deps } from "../deps.ts";
import { AccountError, mailableEmail, normalizeEmail } from "../../metering/accounts.ts";
import type { AccountState } from "../../metering/account_state.ts";
import { alertSettings, usageRecord } from "../../metering/account_state.ts";
import { deleteSession } from "../../metering/sessions.ts";
import { listAlerts } from "../../metering/alerts.ts";
import { clearSessionCookie, csrfCheck, currentSession } from "./guard.ts";
import { ICON, STYLE, type Viewer } from "./layout.tsx";
import { NotFoundPage, RefusedPage } from "./auth_pages.tsx";
import { KeysPage, RevokePage } from "./keys_page.tsx";
import { keyFormToken, newKeyFormId } from "./key_forms.ts";
import { UsagePage } from "./usage_page.tsx";
import { WatchesPage } from "./watches_page.tsx";
import { listWatches } from "../../watches/store.ts";
import { SettingsPage } from "./settings_page.tsx";
import { authRoutes } from "./auth_routes.tsx";
import { alertAddressRoutes, askAlertAddress } from "./alert_address.tsx";
import { accountMails } from "./account_mails.ts";
import type { SignedInHandler } from "./signed_in.ts";
import { PerSecond } from "../../core/per_second.ts";
import { pathSegment, queryValue } from "../query_params.ts";

/**
 * Signed-in requests one account may make a second (in each process); past them a 429 page. Each
 * builds a page from the store, the watches page up to 100 watches with their delivery notes: 16,000
 * at once over HTTP/2 (200 a connection) took the process past V8's heap limit and killed it, and
 * fewer took other accounts' paid calls from 10 to 143 ms (probe X). A person clicking makes a few.
 */
export const DASHBOARD_PER_SECOND = 20;

export function dashboardRoutes(app: Hono, deps: Deps): void {
  const { accounts, plans, kv, clock } = deps;
  const requests = new PerSecond(DASHBOARD_PER_SECOND);
  const mails = accountMails(deps);
  const refuse = (c: Context, message: string, status: 400 | 403 = 403) =>
    c.html(<RefusedPage message={message} />, status);

  app.use("/dashboard/*", csrfCheck(deps, refuse));

  app.get(
    "/dashboard/style.css",
    (c) =>
      c.body(STYLE, 200, {
        "content-type": "text/css; charset=utf-8",
        "cache-control": "public, max-age=3600",
      }),
  );
  app.get(
    "/dashboard/icon.svg",
    (c) =>
      c.body(ICON, 200, {
        "content-type": "image/svg+xml",
        "cache-control": "public, max-age=86400",
      }),
  );

  /** Runs `handler` for a signed-in visitor; anyone else is sent to the sign-in page. */
  const signedIn: SignedInHandler = (handler) => async (c: Context) => {
    const found = await currentSession(c, deps);
    if (!found) return c.redirect("/dashboard/signin", 303);
    if (!requests.take(found.session.account_id)) {
      c.header("Retry-After", "1");
      return c.html(
        <RefusedPage message="Too many pages at once for this account. Wait a second and try again." />,
        429,
      );
    }
    let account: AccountState;
    try {
      account = await accounts.get(found.session.account_id);
    } catch (e) {
      if (!(e instanceof AccountError)) throw e;
      await deleteSession(kv, found.token);
      clearSessionCookie(c, deps);
      return c.redirect("/dashboard/signin", 303);
    }
    return await handler(c, {
      ...found,
      account,
      viewer: { email: account.email, csrf: found.session.csrf },
    });
  };

  /** The keys page of an account, with a notice, an error or a just-created key's value. */
  const keysPage = async (
    viewer: Viewer,
    account: AccountState,
    extra: Pick<Parameters<typeof KeysPage>[0], "notice" | "error" | "created">,
  ) => (
    <KeysPage
      viewer={viewer}
      account={account}
      keys={await accounts.listKeys(account.id)}
      plan={plans.get(account.plan)}
      formId={newKeyFormId()}
      {...extra}
    />
  );

  // One set of account mails (and one throttled line for refused ones) for all of its forms.
  authRoutes(app, deps, signedIn, mails);
  alertAddressRoutes(app, deps);

  app.get(
    "/dashboard/keys",
    signedIn(async (c, s) => {
      const notice = queryValue(c.req.url, "revoked")
        ? "The key is revoked. Calls with it now get 401."
        : undefined;
      return c.html(await keysPage(s.viewer, s.account, { notice }));
    }),
  );

  app.post(
    "/dashboard/keys",
    signedIn(async (c, s) => {
      const form = await c.req.parseBody();
      try {
        const { key, value } = await accounts.createKey(s.account.id, {
          mode: String(form.mode ?? "live"),
          name: String(form.name ?? ""),
          once: keyFormToken(String(form.form_id ?? "")),
        });
        const account = await accounts.get(s.account.id);
        return c.html(
          await keysPage(s.viewer, account, { created: { apiKey: key, value } }),
        );
      } catch (e) {
        if (!(e instanceof AccountError)) throw e;
        const error = e.code === "already_created"
          ? `Key not created: ${e.message}. A key's value is shown only once; if it was not ` +
            "copied, revoke that key and create another with the form below."
          : `Key not created: ${e.message}.`;
        return c.html(await keysPage(s.viewer, s.account, { error }), e.status as 409);
      }
    }),
  );

  app.get(
    "/dashboard/keys/:id/revoke",
    signedIn((c, s) => {
      const id = pathSegment(c.req.path, 3);
      const key = Object.hasOwn(s.account.keys, id) ? s.account.keys[id] : undefined;
      if (!key) return c.html(<RefusedPage message="No such key on this account." />, 404);
      if (key.status !== "active") return c.redirect("/dashboard/keys", 303);
      return c.html(<RevokePage viewer={s.viewer} apiKey={key} />);
    }),
  );

  app.post(
    "/dashboard/keys/:id/revoke",
    signedIn(async (c, s) => {
      const id = pathSegment(c.req.path, 3);
      if (!Object.hasOwn(s.account.keys, id)) {
        return c.html(<RefusedPage message="No such key on this account." />, 404);
      }
      await accounts.revokeKey(id);
      return c.redirect("/dashboard/keys?revoked=1", 303);
    }),
  );

  app.get(
    "/dashboard/usage",
    signedIn(async (c, s) => {
      const usage = usageRecord(s.account, plans.get(s.account.plan));
      const alerts = await listAlerts(kv, s.account.id, 20);
      return c.html(
        <UsagePage
          viewer={s.viewer}
          account={s.account}
          keys={await accounts.listKeys(s.account.id)}
          usage={usage}
          alerts={alerts}
          mailConfigured={!!deps.delivery}
          now={clock.now()}
        />,
      );
    }),
  );

  app.get(
    "/dashboard/watches",
    signedIn(async (c, s) =>
      c.html(<WatchesPage viewer={s.viewer} watches={await listWatches(kv, s.account.id)} />)
    ),
  );

  app.get(
    "/dashboard/settings",
    signedIn((c, s) =>
      c.html(
        <SettingsPage
          viewer={s.viewer}
          account={s.account}
          saved={!!queryValue(c.req.url, "saved")}
          confirm={!!queryValue(c.req.url, "confirm")}
          password={!!queryValue(c.req.url, "password")}
          mailConfigured={!!deps.delivery}
        />,
      )
    ),
  );

  app.post(
    "/dashboard/settings",
    signedIn(async (c, s) => {
      const form = await c.req.parseBody();
      const given = String(form.alert_email ?? "");
      // A private host's is no address to confirm: updateAlerts refuses it, before any mail
      // (probe FB: the confirmation went to root@localhost).
      const email = mailableEmail(given);
      // An address stored before private hosts were refused, sent back as the form shows it, is
      // left as it is (or, the account's own, as no other), so the alerts' boxes still save: the
      // form was refused until the field was cleared, with nothing saying so (probe FC).
      const written = normalizeEmail(given);
      const stale = written !== null && email === null;
      const own = stale && written === s.account.email;
      const kept = stale && written === alertSettings(s.account).email;
      // Another address than the account's own is confirmed from a mailed link first (see
      // alert_address.tsx). Without a mail server none can be, and none is mailed: the address is
      // kept, and alerts go to the account's own until it is confirmed (alertRecipient).
      const confirm = !!deps.mailer && email !== null && email !== s.account.email &&
        email !== alertSettings(s.account).confirmed;
      let saved: AccountState;
      try {
        saved = await accounts.updateAlerts(s.account.id, {
          at80: form.at80 === "on",
          at100: form.at100 === "on",
          email: own ? null : confirm || kept ? undefined : given,
        });
      } catch (e) {
        if (!(e instanceof AccountError)) throw e;
        return c.html(
          <SettingsPage
            viewer={s.viewer}
            account={s.account}
            error={e.message}
            mailConfigured={!!deps.delivery}
          />,
          422,
        );
      }
      if (confirm) {
        await askAlertAddress(c, deps, mails, {
          account_id: s.account.id,
          asked: alertSettings(saved).asked ?? 0,
          epoch: s.session.epoch ?? 0,
        }, email);
        return c.redirect("/dashboard/settings?confirm=1", 303);
      }
      return c.redirect("/dashboard/settings?saved=1", 303);
    }),
  );

  // Registered last: any other path under /dashboard is a page, not the API's JSON 404 (probe BS).
  app.all("/dashboard/*", (c) => c.html(<NotFoundPage />, 404));
}
