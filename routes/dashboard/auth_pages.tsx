/** Sign-in and sign-up pages. */
import { Csrf, Layout, Notice } from "./layout.tsx";
import { MIN_PASSWORD } from "../../metering/passwords.ts";

export function SignInPage(props: { csrf: string; email?: string; error?: string; notice?: string }) {
  return (
    <Layout title="Sign in" current="/dashboard/signin">
      <div class="card narrow">
        <h1>Sign in</h1>
        {props.error ? <Notice kind="error">{props.error}</Notice> : null}
        {props.notice ? <Notice kind="ok">{props.notice}</Notice> : null}
        <form method="post" action="/dashboard/signin">
          <Csrf token={props.csrf} />
          <label for="email">Email</label>
          <input id="email" name="email" type="email" autocomplete="username" required value={props.email ?? ""} />
          <label for="password">Password</label>
          <input id="password" name="password" type="password" autocomplete="current-password" required />
          <p><button type="submit">Sign in</button></p>
        </form>
        <p class="muted">No account yet? <a href="/dashboard/signup">Sign up</a></p>
      </div>
    </Layout>
  );
}

export function SignUpPage(props: { csrf: string; open: boolean; email?: string; error?: string }) {
  return (
    <Layout title="Sign up" current="/dashboard/signup">
      <div class="card narrow">
        <h1>Create an account</h1>
        {!props.open
          ? <Notice kind="warn">Sign-up is closed on this service. Ask the operator for an account.</Notice>
          : (
            <>
              {props.error ? <Notice kind="error">{props.error}</Notice> : null}
              <form method="post" action="/dashboard/signup">
                <Csrf token={props.csrf} />
                <label for="email">Email</label>
                <input id="email" name="email" type="email" autocomplete="username" required value={props.email ?? ""} />
                <label for="password">Password (at least {MIN_PASSWORD} characters)</label>
                <input id="password" name="password" type="password" autocomplete="new-password" minlength={MIN_PASSWORD} required />
                <p><button type="submit">Create account</button></p>
              </form>
              <p class="muted">The account starts on the free plan: 50 credits per 30 days, one key.</p>
            </>
          )}
        <p class="muted">Have an account? <a href="/dashboard/signin">Sign in</a></p>
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
        <p><a href="/dashboard">Back to the dashboard</a></p>
      </div>
    </Layout>
  );
}
