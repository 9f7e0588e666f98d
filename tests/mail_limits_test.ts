/**
 * The sign-up and account-mail windows (metering/signup_limit.ts, metering/account_mail_limit.ts)
 * and the life of a reset link (metering/password_reset.ts), at the values the README documents:
 * one client may sign up at most 20 times an hour; an address gets at most three account mails an
 * hour and one client may have at most 20 sent an hour; a reset link is good for an hour. The
 * windows are separate: a client's sign-ups do not use up its mails, nor its mails its sign-ups.
 * Each window is read at its documented bound from both sides, with the time handed in.
 */
import assert from "node:assert/strict";
import { reserveSignup } from "../metering/signup_limit.ts";
import { reserveAccountMail } from "../metering/account_mail_limit.ts";
import { issueResetToken } from "../metering/password_reset.ts";
import { readToken } from "../metering/email_tokens.ts";
import type { Client } from "../metering/window_slots.ts";

const HOUR = 60 * 60 * 1000;
const MINUTE = 60 * 1000;
const T0 = Date.UTC(2026, 0, 5, 12, 0, 0);

function client(n = 7): Client {
  return { address: `198.51.100.${n}`, network: null };
}

async function signups(kv: Deno.Kv, who: Client, n: number, now: number): Promise<boolean[]> {
  const got: boolean[] = [];
  for (let i = 0; i < n; i++) got.push(await reserveSignup(kv, who, now));
  return got;
}

Deno.test("one client signs up at most 20 times an hour: refused until the hour from its first is over", async () => {
  await using kv = await Deno.openKv(":memory:");
  const who = client();
  assert.deepEqual(await signups(kv, who, 20, T0), Array(20).fill(true), "20 sign-ups");
  assert.equal(await reserveSignup(kv, who, T0), false, "the 21st in the same minute");
  assert.equal(await reserveSignup(kv, who, T0 + MINUTE + 1_000), false, "61 s later");
  assert.equal(await reserveSignup(kv, who, T0 + HOUR - 1), false, "the hour's last millisecond");
  assert.equal(await reserveSignup(kv, client(8), T0 + MINUTE), true, "another client");
  assert.equal(await reserveSignup(kv, who, T0 + HOUR), true, "a new hour");
});

Deno.test("an address gets at most three account mails an hour, whichever clients ask", async () => {
  await using kv = await Deno.openKv(":memory:");
  const to = "owner@example.com";
  for (let i = 0; i < 3; i++) {
    assert.equal(await reserveAccountMail(kv, to, client(10 + i), T0), true, `mail ${i + 1}`);
  }
  assert.equal(await reserveAccountMail(kv, to, client(20), T0), false, "a 4th mail");
  assert.equal(await reserveAccountMail(kv, "other@example.com", client(20), T0), true);
  assert.equal(await reserveAccountMail(kv, to, client(21), T0 + MINUTE + 1_000), false, "61 s");
  assert.equal(await reserveAccountMail(kv, to, client(22), T0 + HOUR - 1), false, "hour's end");
  assert.equal(await reserveAccountMail(kv, to, client(23), T0 + HOUR), true, "a new hour");
});

Deno.test("one client has at most 20 account mails sent an hour, to any addresses", async () => {
  await using kv = await Deno.openKv(":memory:");
  const who = client();
  for (let i = 0; i < 20; i++) {
    assert.equal(await reserveAccountMail(kv, `a${i}@example.com`, who, T0), true, `mail ${i + 1}`);
  }
  assert.equal(await reserveAccountMail(kv, "a20@example.com", who, T0), false, "the 21st");
  assert.equal(await reserveAccountMail(kv, "a21@example.com", who, T0 + HOUR - 1), false);
  assert.equal(await reserveAccountMail(kv, "a22@example.com", client(8), T0), true, "another");
  assert.equal(await reserveAccountMail(kv, "a23@example.com", who, T0 + HOUR), true, "new hour");
});

Deno.test("a client's sign-ups and its account mails are counted apart: 20 of each in an hour", async () => {
  await using kv = await Deno.openKv(":memory:");
  // Mails first: 20 reset mails leave the client its 20 sign-ups.
  const a = client(30);
  for (let i = 0; i < 20; i++) {
    assert.equal(await reserveAccountMail(kv, `m${i}@example.com`, a, T0), true, `mail ${i + 1}`);
  }
  assert.deepEqual(await signups(kv, a, 20, T0), Array(20).fill(true), "sign-ups after mails");
  // Sign-ups first: 20 sign-ups leave the client its 20 mails (each sign-up mails a confirmation).
  const b = client(31);
  assert.deepEqual(await signups(kv, b, 20, T0), Array(20).fill(true));
  for (let i = 0; i < 20; i++) {
    assert.equal(await reserveAccountMail(kv, `s${i}@example.com`, b, T0), true, `mail ${i + 1}`);
  }
  assert.equal(await reserveSignup(kv, b, T0), false);
  assert.equal(await reserveAccountMail(kv, "s20@example.com", b, T0), false);
});

Deno.test("a reset link is good for an hour from when it was issued, not after", async () => {
  await using kv = await Deno.openKv(":memory:");
  const token = await issueResetToken(kv, "acct-1", "owner@example.com", T0);
  const at = (ms: number) => readToken<{ account_id: string }>(kv, "reset", token, ms);
  assert.equal((await at(T0))?.payload.account_id, "acct-1");
  assert.equal((await at(T0 + 59 * MINUTE))?.payload.account_id, "acct-1");
  assert.ok(await at(T0 + HOUR - 1), "the hour's last millisecond");
  assert.equal(await at(T0 + HOUR), null, "an hour after");
  assert.equal(await at(T0 + 61 * MINUTE), null, "61 minutes after");
});
