/**
 * Device cookies (OWASP, "Slow Down Online Guessing Attacks with Device Cookies"): a browser that
 * has signed in to an account gets a token naming it as a known device for that email. Its later
 * sign-ins count against a window of their own instead of the email's, so anyone who knows an
 * address can still lock out guessers with 10 wrong passwords, but no longer its owner on a browser
 * that has signed in before. The token's digest is stored with the email's digest and an expiry;
 * a token presented with another email counts for nothing.
 */
import { KV } from "./kv_layout.ts";
import { hashKey, randomHex } from "./api_key.ts";
import { reserveSlots, windowOf } from "./window_slots.ts";

/** How long a device stays known after its last sign-in. */
export const DEVICE_MS = 90 * 24 * 3600 * 1000;

interface DeviceEntry {
  /** SHA-256 of the lower-cased email the device signed in to. */
  email: string;
  /**
   * The password epoch it signed in under: a password change or reset forgets every device, so
   * that someone who once knew the password cannot keep tokens that each bring 10 guesses at the
   * new one while the email is locked for everyone else.
   */
  epoch?: number;
  /**
   * When the entry's life (DEVICE_MS from its last sign-in) ends, as its expireIn does. Carried in
   * the value so that a backup restores it with the life it has left: restored without one, a
   * device was known for good (probe FR). Entries of earlier versions lack it (backup.ts drops them).
   */
  expires_at?: number;
}

/**
 * The digest of `token` when it names a device known for `email` under the password of `epoch`,
 * else null.
 */
export async function knownDevice(
  kv: Deno.Kv,
  token: string | undefined,
  email: string,
  epoch: number,
  now: number,
): Promise<string | null> {
  if (!token || !/^[0-9a-f]{64}$/.test(token)) return null;
  const digest = hashKey(token);
  const entry = (await kv.get<DeviceEntry>(KV.signinDevice(digest))).value;
  // KV's own expiry may run late (it purges in the background): the life is checked here too.
  const live = entry?.expires_at === undefined || entry.expires_at > now;
  return live && entry?.email === hashKey(email) && (entry.epoch ?? 0) === epoch ? digest : null;
}

/**
 * New devices an email may be given a day. Each is an entry kept 90 days, so sign-ins without the
 * cookie (a script, a private window) stored one each: 3.8 MB a day from one address.
 */
export const NEW_DEVICES_PER_DAY = 20;

/**
 * Makes a new device token for `email`, or renews the life of a known one; returns the token, or
 * null when the email has been given NEW_DEVICES_PER_DAY new devices today (the sign-in goes on
 * without one).
 */
export async function rememberDevice(
  kv: Deno.Kv,
  email: string,
  token: string | null,
  now: number,
  epoch: number,
): Promise<string | null> {
  if (token === null) {
    const window = windowOf(email, KV.deviceGrants, NEW_DEVICES_PER_DAY);
    if (await reserveSlots(kv, [window], 24 * 3600 * 1000, now)) return null;
  }
  const kept = token ?? randomHex(32);
  const entry: DeviceEntry = { email: hashKey(email), epoch, expires_at: now + DEVICE_MS };
  await kv.set(KV.signinDevice(hashKey(kept)), entry, { expireIn: DEVICE_MS });
  return kept;
}
