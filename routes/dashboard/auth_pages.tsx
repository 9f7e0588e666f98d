/** Sign-in and sign-up pages. */
import { Csrf, Layout, Notice, type Viewer } from "./layout.tsx";
import { MIN_PASSWORD } from "../../metering/passwords.ts";
import type { Plan } from "../../metering/plans.ts";

export function SignInPage(
  props: { csrf: string; email?: string; error?: string; notice?: string },
) {
  return (
    <Layout title="Sign in" current="/dashboard/signin">
      <div class="card narrow">
        <h1>Sign in</h1>
        {props.error ? <Notice kind="error">{props.error}</Notice> : null}
        {props.notice ? <Notice kind="ok">{props.notice}</Notice> : null}
        <form method="post" action="/dashboard/signin">
          <Csrf token={props.csrf} />
          <label for="email">Email</label>
          <input
            id="email"
            name="email"
            type="email"
            autocomplete="username"
            required
            value={props.email ?? ""}
          />
          <label for="password">Password</label>
          <input
            id="password"
            name="password"
            type="password"
            autocomplete="current-password"
            required
          />
          <p>
            <button type="submit">Sign in</button>
          </p>
        </form>
        <p class="muted">
          <a href="/dashboard/forgot">Forgot your password?</a>
        </p>
        <p class="muted">
          No account yet? <a href="/dashboard/signup">Sign up</a>
        </p>
      </div>
    </Layout>
  );
}

export function SignUpPage(
  props: {
    csrf: string;
    open: boolean;
    verify?: boolean;
    email?: string;
    error?: string;
    /** The plan sign-ups start on, as this catalog (PLANS_FILE) has it. */
    plan?: Plan;
  },
) {
  const keys = props.plan?.max_keys === 1 ? "one key" : `${props.plan?.max_keys} keys`;
  return (
    <Layout title="Sign up" current="/dashboard/signup">
      <div class="card narrow">
        <h1>Create an account</h1>
        {!props.open
          ? (
            <Notice kind="warn">
              Sign-up is closed on this service. Ask the operator for an account.
            </Notice>
          )
          : (
            <>
              {props.error ? <Notice kind="error">{props.error}</Notice> : null}
              <form method="post" action="/dashboard/signup">
                <Csrf token={props.csrf} />
                <label for="email">Email</label>
                <input
                  id="email"
                  name="email"
                  type="email"
                  autocomplete="username"
                  required
                  value={props.email ?? ""}
                />
                {props.verify ? null : <NewPassword label="Password" />}
                <p>
                  <button type="submit">
                    {props.verify ? "Mail me a link" : "Create account"}
                  </button>
                </p>
              </form>
              <p class="muted">
                {props.plan
                  ? `The account starts on the ${props.plan.id} plan: ${props.plan.credits} credits per 30 days, ${keys}.`
                  : ""}
                {props.verify
                  ? " We mail you a link first: you choose the password when you open it, and the account exists once you do."
                  : ""}
              </p>
            </>
          )}
        <p class="muted">
          Have an account? <a href="/dashboard/signin">Sign in</a>
        </p>
      </div>
    </Layout>
  );
}

export function RefusedPage(props: { message: string }) {
  return (
    <Layout title="Refused">
      <div class="card narrow">
        <h1>Request refused</h1>
        <Notice kind="error">{props.message}</Notice>
        <p>
          <a href="/dashboard">Back to the dashboard</a>
        </p>
      </div>
    </Layout>
  );
}

/** What sign-up and "forgot password" answer, whether or not the address has an account. */
export function CheckMailPage(props: { title: string; message: string }) {
  return (
    <Layout title={props.title}>
      <div class="card narrow">
        <h1>{props.title}</h1>
        <Notice kind="ok">{props.message}</Notice>
        <p>
          <a href="/dashboard/signin">Back to sign in</a>
        </p>
      </div>
    </Layout>
  );
}

/** Any other path under /dashboard (a mistyped address, a trailing slash). */
export function NotFoundPage() {
  return (
    <Layout title="Not found">
      <div class="card narrow">
        <h1>No such page</h1>
        <p>
          <a href="/dashboard">Go to the dashboard</a>
        </p>
      </div>
    </Layout>
  );
}

export function LinkInvalidPage() {
  return (
    <Layout title="Link expired">
      <div class="card narrow">
        <h1>This link no longer works</h1>
        <Notice kind="error">It was used already, or it expired. Ask for a new one.</Notice>
        <p>
          <a href="/dashboard/signup">Sign up</a> · <a href="/dashboard/forgot">Forgot password</a>
        </p>
      </div>
    </Layout>
  );
}

/** A new password's field, with its minimum length. */
function NewPassword(props: { label: string }) {
  return (
    <>
      <label for="password">{props.label} (at least {MIN_PASSWORD} characters)</label>
      <input
        id="password"
        name="password"
        type="password"
        autocomplete="new-password"
        minlength={MIN_PASSWORD}
        required
      />
    </>
  );
}

/**
 * The confirmation link opens this page; only its form (a POST, with the password chosen here)
 * creates the account.
 */
export function VerifyPage(props: { csrf: string; token: string; email: string; error?: string }) {
  return (
    <Layout title="Confirm your address">
      <div class="card narrow">
        <h1>Confirm your address</h1>
        {props.error ? <Notice kind="error">{props.error}</Notice> : null}
        <p>
          Create the Shelf account for <strong>{props.email}</strong>: choose its password.
        </p>
        <form method="post" action="/dashboard/verify">
          <Csrf token={props.csrf} />
          <input type="hidden" name="token" value={props.token} />
          <NewPassword label="Password" />
          <p>
            <button type="submit">Create my account</button>
          </p>
        </form>
      </div>
    </Layout>
  );
}

export function ForgotPage(props: { csrf: string; mail: boolean }) {
  return (
    <Layout title="Forgot password">
      <div class="card narrow">
        <h1>Forgot your password?</h1>
        {props.mail
          ? (
            <form method="post" action="/dashboard/forgot">
              <Csrf token={props.csrf} />
              <label for="email">Email</label>
              <input id="email" name="email" type="email" autocomplete="username" required />
              <p>
                <button type="submit">Mail me a reset link</button>
              </p>
            </form>
          )
          : (
            <Notice kind="warn">
              This service has no mail server configured. Ask the operator for a link to choose your
              password.
            </Notice>
          )}
      </div>
    </Layout>
  );
}

export function ResetPage(props: { csrf: string; token: string; error?: string }) {
  return (
    <Layout title="New password">
      <div class="card narrow">
        <h1>Choose a new password</h1>
        {props.error ? <Notice kind="error">{props.error}</Notice> : null}
        <form method="post" action="/dashboard/reset">
          <Csrf token={props.csrf} />
          <input type="hidden" name="token" value={props.token} />
          <NewPassword label="New password" />
          <p>
            <button type="submit">Set password</button>
          </p>
        </form>
        <p class="muted">Every browser signed in to the account is signed out.</p>
      </div>
    </Layout>
  );
}

export function PasswordPage(props: { viewer: Viewer; error?: string }) {
  return (
    <Layout title="Change password" viewer={props.viewer} current="/dashboard/settings">
      <div class="card narrow">
        <h1>Change password</h1>
        {props.error ? <Notice kind="error">{props.error}</Notice> : null}
        <form method="post" action="/dashboard/password">
          <Csrf token={props.viewer.csrf} />
          <label for="current">Current password</label>
          <input
            id="current"
            name="current"
            type="password"
            autocomplete="current-password"
            required
          />
          <NewPassword label="New password" />
          <p>
            <button type="submit">Change password</button>
          </p>
        </form>
        <p class="muted">Every other browser signed in to the account is signed out.</p>
      </div>
    </Layout>
  );
}
