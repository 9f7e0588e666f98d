/**
 * Sign-in lockout in KV, shared by every instance on the store (issue 13.5): at most LIMIT
 * password checks per email within WINDOW_MS. An attempt takes its slot by an atomic
 * check-and-increment BEFORE the password is checked, so a parallel burst cannot slip more
 * guesses through than the limit; a correct password clears the count. One client (see
 * routes/client_address.ts) may make at most CLIENT_SIGNIN_LIMIT attempts a window whatever the
 * emails, taken first: otherwise a stream of sign-ins with made-up emails would store a counter
 * for each, growing the store without bound, and one client could try a password on every account.
 */
import { KV } from "./kv_layout.ts";
import { hashKey } from "./api_key.ts";
import { reserveSlot } from "./window_slots.ts";

export const SIGNIN_LIMIT = 10;
export const SIGNIN_WINDOW_MS = 15 * 60 * 1000;
export const CLIENT_SIGNIN_LIMIT = 100;

/**
 * Takes one attempt's slot of the client's and then of the email's; says which has used all of
 * its window's attempts, if one has (a refused client takes none of the email's). `client` null:
 * the email's only.
 */
export async function reserveAttempt(
  kv: Deno.Kv,
  email: string,
  client: string | null,
  now: number,
): Promise<"ok" | "client" | "email"> {
  if (
    client !== null &&
    !(await reserveSlot(
      kv,
      KV.clientSignins(hashKey(client)),
      CLIENT_SIGNIN_LIMIT,
      SIGNIN_WINDOW_MS,
      now,
    ))
  ) return "client";
  const key = KV.signinAttempts(hashKey(email));
  return (await reserveSlot(kv, key, SIGNIN_LIMIT, SIGNIN_WINDOW_MS, now)) ? "ok" : "email";
}

export async function clearAttempts(kv: Deno.Kv, email: string): Promise<void> {
  await kv.delete(KV.signinAttempts(hashKey(email)));
}
