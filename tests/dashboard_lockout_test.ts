/**
 * Lock-outs of the dashboard's password checks: the per-address sign-in lock-out holds whatever
 * the case of the address typed; a signed-in session gets 10 guesses at the current password a
 * window on /dashboard/password; and a password reset starts the address's count afresh.
 */
import assert from "node:assert/strict";
import { ManualClock, startServer } from "./test_server.ts";
import { startSmtpSink } from "./smtp_sink.ts";
import {
  askReset,
  type Browser,
  browser,
  PASSWORD,
  resetWith,
  signIn,
  signUpOpen,
} from "./dashboard_client.ts";
import { SIGNIN_WINDOW_MS } from "../metering/signin_lockout.ts";

/** README: "10 failed sign-ins for an email in 15 minutes lock that email". */
const SIGNIN_LIMIT = 10;

Deno.test("the sign-in lock-out is per address, whatever the case it is typed in", async () => {
  await using s = await startServer({ signup: "open" });
  await signUpOpen(browser(s.url), "lock@example.com");
  for (let i = 0; i < SIGNIN_LIMIT; i++) {
    assert.equal((await signIn(browser(s.url), "lock@example.com", "wrong password!")).status, 401);
  }
  assert.equal((await signIn(browser(s.url), "Lock@example.com", "wrong password!")).status, 429);
  assert.equal((await signIn(browser(s.url), "LOCK@Example.COM")).status, 429, "right one too");
  assert.equal((await signIn(browser(s.url), " lock@EXAMPLE.com ")).status, 429);
});

/**
 * POSTs the password form of `b` (signed in): the status, with the dashboard's own per-second
 * refusal ("Too many pages at once") waited out, so that only the form's answer counts.
 */
async function changePassword(b: Browser, current: string, password: string): Promise<number> {
  for (let tries = 0; tries < 20; tries++) {
    const page = await b.send("/dashboard/password");
    if (page.status === 429) {
      await new Promise((r) => setTimeout(r, 250));
      continue;
    }
    assert.equal(page.status, 200);
    assert.ok(page.csrf, "the form's token");
    const r = await b.send("/dashboard/password", {
      form: { _csrf: page.csrf, current, password },
    });
    if (r.status === 429 && /Too many pages at once/.test(r.text)) {
      await new Promise((r) => setTimeout(r, 250));
      continue;
    }
    return r.status;
  }
  throw new Error("the dashboard kept refusing pages");
}

Deno.test("a signed-in session gets 10 guesses at the current password a window, then none, the right one included", async () => {
  const clock = new ManualClock();
  await using s = await startServer({ signup: "open", clock });
  const thief = browser(s.url);
  await signUpOpen(thief, "stolen@example.com");
  const statuses: number[] = [];
  for (let i = 0; i < SIGNIN_LIMIT + 2; i++) {
    statuses.push(await changePassword(thief, `guess number ${i}`, "a brand new password"));
  }
  assert.deepEqual(statuses, [...Array(SIGNIN_LIMIT).fill(401), 429, 429]);
  assert.equal(await changePassword(thief, PASSWORD, "a brand new password"), 429);
  assert.equal(
    (await signIn(browser(s.url), "stolen@example.com", "a brand new password")).status,
    401,
  );
  // Once the window is over, the right password changes it.
  clock.advance(SIGNIN_WINDOW_MS);
  assert.equal(await changePassword(thief, PASSWORD, "a brand new password"), 303);
  assert.equal(
    (await signIn(browser(s.url), "stolen@example.com", "a brand new password")).status,
    303,
  );
});

Deno.test("a password reset starts the address's failed sign-ins afresh", async () => {
  await using smtp = await startSmtpSink();
  await using s = await startServer({ signup: "open", smtp: { url: smtp.url } });
  const email = "guessed-at@example.com";
  await signUpOpen(browser(s.url), email);
  // Guessers use all but one of the address's attempts; its owner resets the password.
  for (let i = 0; i < SIGNIN_LIMIT - 1; i++) {
    assert.equal((await signIn(browser(s.url), email, "a guesser's guess")).status, 401);
  }
  const token = await askReset(s.url, smtp, email, 1);
  assert.equal(await resetWith(s.url, token, "the owner's new password"), 303);
  // The reset cleared the count: a whole window of attempts again before the lock-out.
  for (let i = 0; i < SIGNIN_LIMIT; i++) {
    assert.equal((await signIn(browser(s.url), email, "another guess")).status, 401, `guess ${i}`);
  }
  assert.equal((await signIn(browser(s.url), email, "the owner's new password")).status, 429);
});

Deno.test("a password reset lifts a full lock-out: the owner signs in with the new password at once", async () => {
  await using smtp = await startSmtpSink();
  await using s = await startServer({ signup: "open", smtp: { url: smtp.url } });
  const email = "locked-out@example.com";
  await signUpOpen(browser(s.url), email);
  for (let i = 0; i < SIGNIN_LIMIT; i++) {
    assert.equal((await signIn(browser(s.url), email, "a guesser's guess")).status, 401);
  }
  // The server has now seen the window full, and refuses the owner's right password too.
  assert.equal((await signIn(browser(s.url), email)).status, 429);
  const token = await askReset(s.url, smtp, email, 1);
  assert.equal(await resetWith(s.url, token, "the owner's new password"), 303);
  assert.equal((await signIn(browser(s.url), email, "the owner's new password")).status, 303);
  // The window starts afresh: guessers get its attempts again, not more.
  for (let i = 0; i < SIGNIN_LIMIT; i++) {
    assert.equal((await signIn(browser(s.url), email, "another guess")).status, 401, `guess ${i}`);
  }
  assert.equal((await signIn(browser(s.url), email, "another guess")).status, 429);
});
