/**
 * The settings page: usage alerts at 80% and 100%, and where they are sent; the account, and the
 * way to change its password (which signs every other browser out: linked from nowhere, it was
 * found only by typing its address, probe DE).
 */
import { type AccountState, alertRecipient, alertSettings } from "../../metering/account_state.ts";
import { Csrf, Layout, Notice, type Viewer } from "./layout.tsx";

export function SettingsPage(
  props: {
    viewer: Viewer;
    account: AccountState;
    saved?: boolean;
    /** A new alert address was mailed a link to confirm it. */
    confirm?: boolean;
    /** The password was just changed. */
    password?: boolean;
    error?: string;
    mailConfigured: boolean;
  },
) {
  const s = alertSettings(props.account);
  return (
    <Layout title="Settings" viewer={props.viewer} current="/dashboard/settings">
      <h1>Settings</h1>
      {props.error ? <Notice kind="error">{props.error}</Notice> : null}
      {props.saved ? <Notice kind="ok">Settings saved.</Notice> : null}
      {props.password
        ? (
          <Notice kind="ok">
            Password changed. Every other browser signed in to the account is signed out.
          </Notice>
        )
        : null}
      {props.confirm
        ? (
          <Notice kind="ok">
            Settings saved. The new alert address was mailed a link: alerts go there once it is
            opened, and to the address below until then.
          </Notice>
        )
        : null}
      <div class="card">
        <h2>Usage alerts</h2>
        <p class="muted">
          One email when this period's usage reaches 80% of the included credits, and one at 100%.
          {props.mailConfigured
            ? ""
            : " This service has no mail server configured: alerts are listed on the Usage page only."}
        </p>
        <form method="post" action="/dashboard/settings">
          <Csrf token={props.viewer.csrf} />
          <input type="hidden" name="alerts_form" value="1" />
          <label class="check">
            <input type="checkbox" name="at80" value="on" checked={s.at80} />{" "}
            Alert at 80% of credits
          </label>
          <label class="check">
            <input type="checkbox" name="at100" value="on" checked={s.at100} />{" "}
            Alert at 100% of credits
          </label>
          <label for="alert_email">Send alerts to</label>
          <input
            id="alert_email"
            name="alert_email"
            type="email"
            value={s.email ?? ""}
            placeholder={props.account.email}
          />
          <p class="muted">
            Empty: the account's email,{" "}
            {props.account.email}. Another address gets a link to confirm it first.
            {s.email !== null && alertRecipient(props.account) !== s.email
              ? ` ${s.email} is not confirmed: alerts go to ${props.account.email}.`
              : ""}
          </p>
          <p>
            <button type="submit">Save</button>
          </p>
        </form>
      </div>
      <div class="card">
        <h2>Account</h2>
        <p>
          Email: {props.account.email}
          <br />Plan: {props.account.plan}
          <br />Account id: <span class="mono">{props.account.id}</span>
        </p>
        <p>
          <a href="/dashboard/password">Change password</a>{" "}
          <span class="muted">(signs every other browser out)</span>
        </p>
      </div>
    </Layout>
  );
}
