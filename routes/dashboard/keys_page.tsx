/** The keys page: list, create (the value shown once), and the revoke confirmation. */
import type { AccountState, KeyState } from "../../metering/account_state.ts";
import type { Plan } from "../../metering/plans.ts";
import { activeKeyCount } from "../../metering/account_state.ts";
import { Csrf, Layout, Notice, type Viewer, when } from "./layout.tsx";

export interface CreatedKey {
  value: string;
  apiKey: KeyState;
}

export function KeysPage(
  props: {
    viewer: Viewer;
    account: AccountState;
    keys: KeyState[];
    plan: Plan | undefined;
    created?: CreatedKey;
    error?: string;
    notice?: string;
    /** This rendering's create-key form id (key_forms.ts). */
    formId: string;
  },
) {
  const keys = props.keys;
  const max = props.plan?.max_keys ?? 0;
  const active = activeKeyCount(props.account);
  return (
    <Layout
      title="API keys"
      viewer={props.viewer}
      current="/dashboard/keys"
      script={!!props.created}
    >
      <h1>API keys</h1>
      {props.error ? <Notice kind="error">{props.error}</Notice> : null}
      {props.notice ? <Notice kind="ok">{props.notice}</Notice> : null}
      {props.created ? <Created value={props.created.value} apiKey={props.created.apiKey} /> : null}
      <div class="card">
        <table class="stack" id="keys">
          <thead>
            <tr>
              <th>Name</th>
              <th>Key</th>
              <th>Mode</th>
              <th>Created</th>
              <th>Last used</th>
              <th>Status</th>
              <th></th>
            </tr>
          </thead>
          <tbody>
            {keys.length === 0
              ? (
                <tr>
                  <td colspan={7} class="muted">No keys yet.</td>
                </tr>
              )
              : null}
            {keys.map((k) => (
              <tr data-key-id={k.id}>
                <td data-label="Name">{k.name || <span class="muted">(unnamed)</span>}</td>
                <td data-label="Key" class="mono">{k.prefix}…{k.last4}</td>
                <td data-label="Mode">{k.mode}</td>
                <td data-label="Created">{when(k.created_at)}</td>
                <td data-label="Last used" class="last-used">{when(k.last_used_at)}</td>
                <td data-label="Status" class={`status-${k.status}`}>
                  {k.status}
                  {k.revoked_at ? ` ${when(k.revoked_at)}` : ""}
                </td>
                <td data-label="">
                  {k.status === "active"
                    ? <a href={`/dashboard/keys/${k.id}/revoke`}>Revoke…</a>
                    : null}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      <div class="card">
        <h2>Create a key</h2>
        <p class="muted">
          {active} of {max} active key{max === 1 ? "" : "s"} on the {props.account.plan}{" "}
          plan. Live keys are for production, test keys for CI, staging and local work; both use the
          same credits.
        </p>
        {active >= max
          ? (
            <Notice kind="warn">
              The {props.account.plan} plan allows {max}{" "}
              active key{max === 1 ? "" : "s"}. Revoke a key to create another.
            </Notice>
          )
          : null}
        <form method="post" action="/dashboard/keys" class="row">
          <Csrf token={props.viewer.csrf} />
          <input type="hidden" name="form_id" value={props.formId} />
          <div>
            <label for="name">Name</label>
            <input
              id="name"
              name="name"
              type="text"
              maxlength={80}
              placeholder="e.g. production server"
            />
          </div>
          <div class="fit">
            <label for="mode">Mode</label>
            <select id="mode" name="mode">
              <option value="live">live</option>
              <option value="test">test</option>
            </select>
          </div>
          <div class="fit">
            <button type="submit">Create key</button>
          </div>
        </form>
      </div>
    </Layout>
  );
}

function Created(props: CreatedKey) {
  return (
    <div class="card" id="new-key">
      <h2>Your new {props.apiKey.mode} key{props.apiKey.name ? ` “${props.apiKey.name}”` : ""}</h2>
      <Notice kind="warn">
        Copy it now and keep it somewhere safe. It is shown only this once: Shelf stores only a
        digest of it and cannot show it again.
      </Notice>
      <div class="secret">
        <input
          id="new-key-value"
          type="text"
          readonly
          value={props.value}
          autocomplete="off"
          spellcheck={false}
          aria-label="New API key"
        />
        <button type="button" class="secondary" data-copy="new-key-value" hidden>Copy</button>
      </div>
      <p class="muted">
        Send it as the <code>x-api-key</code> header or as{" "}
        <code>Authorization: Bearer &lt;key&gt;</code>.
      </p>
    </div>
  );
}

export function RevokePage(props: { viewer: Viewer; apiKey: KeyState }) {
  const k = props.apiKey;
  return (
    <Layout title="Revoke key" viewer={props.viewer} current="/dashboard/keys">
      <div class="card narrow">
        <h1>Revoke this key?</h1>
        <p>
          <strong>{k.name || "(unnamed)"}</strong> <span class="mono">{k.prefix}…{k.last4}</span>
          {" "}
          ({k.mode}), last used {when(k.last_used_at)}.
        </p>
        <Notice kind="warn">
          Revoking takes effect at once: the next call with this key gets 401. It cannot be undone.
        </Notice>
        <form method="post" action={`/dashboard/keys/${k.id}/revoke`} class="row">
          <Csrf token={props.viewer.csrf} />
          <div class="fit">
            <button type="submit" class="danger">Revoke key</button>
          </div>
          <div class="fit">
            <a class="button secondary" href="/dashboard/keys">Cancel</a>
          </div>
        </form>
      </div>
    </Layout>
  );
}
