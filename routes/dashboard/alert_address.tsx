/**
 * Usage alerts go to an address other than the account's own only once its owner has confirmed
 * it from a mailed link. Set at once, any address could be made to receive the operator's alert
 * mails, outside the account mail limits that keep the dashboard's forms from mailing lists of
 * strangers (probe AG). The confirmation mail is such an account mail, within those limits.
 */
import type { Context, Hono } from "hono";
import type { Deps } from "../deps.ts";
import { issueToken, readToken } from "../../metering/email_tokens.ts";
import { readCredential } from "../../metering/passwords.ts";
import { alertSettings } from "../../metering/account_state.ts";
import { alertAddressMail } from "../../mail/account_mail.ts";
import type { AccountMails } from "./account_mails.ts";
import { formToken } from "./guard.ts";
import { CheckMailPage, LinkInvalidPage } from "./auth_pages.tsx";
import { Csrf, Layout } from "./layout.tsx";
import { queryValue } from "../query_params.ts";

/**
 * A link is void once the account's alert settings moved on from the count it was asked under,
 * or its password changed: left in a mailbox the owner since replaced, it took the alerts back
 * there unnoticed (probe AU).
 */
interface PendingAlertAddress {
  account_id: string;
  email: string;
  /** AlertSettings.asked when the link was asked for. */
  asked?: number;
  /** The password epoch of the session that asked (passwords.ts). */
  epoch?: number;
}

/**
 * Mails `email` a link that makes it the account's alert address, if this client may send it one
 * more account mail this hour (either way the settings page says a link is on its way).
 */
export async function askAlertAddress(
  c: Context,
  deps: Deps,
  mails: AccountMails,
  asked: Required<Omit<PendingAlertAddress, "email">>,
  email: string,
): Promise<void> {
  if (!(await mails.may(c, email, "alert_address"))) return;
  mails.later("alert address mail", async () => {
    const payload: PendingAlertAddress = { ...asked, email };
    const token = await issueToken(deps.kv, "alert", payload, deps.clock.now());
    return alertAddressMail(email, deps.publicUrl, token);
  });
}

export function alertAddressRoutes(app: Hono, deps: Deps): void {
  const { kv, clock, accounts } = deps;
  /**
   * Whether the account's password and alert settings are still those the link was asked under
   * (the confirming commit checks the settings again: updateAlerts' ifAsked).
   */
  const stillAsked = async ({ account_id, asked, epoch }: PendingAlertAddress) => {
    const [credential, account] = await Promise.all([
      readCredential(kv, account_id),
      accounts.get(account_id).catch(() => null),
    ]);
    return (credential?.epoch ?? 0) === (epoch ?? 0) && account !== null &&
      (alertSettings(account).asked ?? 0) === (asked ?? 0);
  };
  // Opening the link shows a button: mail scanners that fetch every link confirm nothing.
  app.get("/dashboard/alert-address", async (c) => {
    const token = queryValue(c.req.url, "token") ?? "";
    const pending = await readToken<PendingAlertAddress>(kv, "alert", token, clock.now());
    if (!pending || !(await stillAsked(pending.payload))) return c.html(<LinkInvalidPage />, 400);
    return c.html(
      <AlertAddressPage csrf={formToken(c, deps)} token={token} email={pending.payload.email} />,
    );
  });

  app.post("/dashboard/alert-address", async (c) => {
    const token = String((await c.req.parseBody()).token ?? "");
    const pending = await readToken<PendingAlertAddress>(kv, "alert", token, clock.now());
    if (!pending) return c.html(<LinkInvalidPage />, 400);
    const spent = await pending.spend(kv.atomic()).commit();
    if (!spent.ok) return c.html(<LinkInvalidPage />, 400);
    const { account_id, email, asked } = pending.payload;
    if (!(await stillAsked(pending.payload))) return c.html(<LinkInvalidPage />, 400);
    try {
      await accounts.updateAlerts(account_id, { email, confirmed: email }, asked ?? 0);
    } catch {
      return c.html(<LinkInvalidPage />, 400); // the account is gone, or its settings moved on
    }
    return c.html(
      <CheckMailPage
        title="Address confirmed"
        message={`Usage alerts of the account will be sent to ${email}.`}
      />,
    );
  });
}

function AlertAddressPage(props: { csrf: string; token: string; email: string }) {
  return (
    <Layout title="Confirm the alert address">
      <div class="card narrow">
        <h1>Send usage alerts here?</h1>
        <p>
          A Shelf account asked to send its usage alerts (at 80% and 100% of its monthly credits) to
          {" "}
          <strong>{props.email}</strong>.
        </p>
        <form method="post" action="/dashboard/alert-address">
          <Csrf token={props.csrf} />
          <input type="hidden" name="token" value={props.token} />
          <p>
            <button type="submit">Send alerts to this address</button>
          </p>
        </form>
        <p class="muted">If you do not want them, close this page: nothing is sent here.</p>
      </div>
    </Layout>
  );
}
