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
import { type Client, clientWindows, reserveSlots, windowOf } from "./window_slots.ts";

export const SIGNIN_LIMIT = 10;
export const SIGNIN_WINDOW_MS = 15 * 60 * 1000;
export const CLIENT_SIGNIN_LIMIT = 100;

/**
 * Takes one attempt's slot of the client's and then of the email's; says which has used all of
 * its window's attempts, if one has (a refused client takes none of the email's). An unknown client:
 * the email's only. From a device known for the email (`device`: its digest, sign_in_devices.ts)
 * the attempt takes a slot of the device's window instead ("device", or "device_spent"), which
 * guessers elsewhere cannot fill.
 */
export async function reserveAttempt(
  kv: Deno.Kv,
  email: string,
  client: Client,
  now: number,
  device: string | null = null,
): Promise<"device" | "ok" | "client" | "email" | "device_spent"> {
  // A known device names one email, whose password it knew: the client limits, which keep one
  // client from trying passwords on many emails, would only let a neighbour behind the same
  // address or /48 lock its owner out. Its sign-ins that succeed count too: cleared on success,
  // one remembered browser signed in 33 times a second, each a scrypt run and a stored session.
  if (device !== null) {
    const own = { key: KV.deviceSignins(device), limit: SIGNIN_LIMIT };
    return (await reserveSlots(kv, [own], SIGNIN_WINDOW_MS, now)) === null
      ? "device"
      : "device_spent";
  }
  const own = windowOf(email, KV.signinAttempts, SIGNIN_LIMIT);
  const byClient = clientWindows(client, KV.clientSignins, CLIENT_SIGNIN_LIMIT);
  const refused = await reserveSlots(kv, [...byClient, own], SIGNIN_WINDOW_MS, now);
  return refused === null ? "ok" : refused === own ? "email" : "client";
}

/**
 * A password check of a signed-in session (changing the password): counted in the session's own
 * window, not the email's, which anyone who knows the address can fill and so kept the owner from
 * changing the password while guessers locked the email. True when a slot was taken.
 */
export async function reserveSessionAttempt(
  kv: Deno.Kv,
  sessionToken: string,
  now: number,
): Promise<boolean> {
  const own = windowOf(sessionToken, KV.sessionPasswordChecks, SIGNIN_LIMIT);
  return (await reserveSlots(kv, [own], SIGNIN_WINDOW_MS, now)) === null;
}

/**
 * After a correct password that counted in the email's window (not a known device's): clears it.
 * A sign-in from a known device leaves the email's window as it is, so that its owner signing in
 * does not hand guessers elsewhere a fresh set of attempts, and its own, whose successes count.
 */
export async function clearAttempts(kv: Deno.Kv, email: string): Promise<void> {
  await kv.delete(KV.signinAttempts(hashKey(email)));
}
