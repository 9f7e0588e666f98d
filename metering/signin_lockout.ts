/**
 * Sign-in lockout in KV, shared by every instance on the store (issue 13.5): at most LIMIT
 * password checks per email within WINDOW_MS. An attempt takes its slot by an atomic
 * check-and-increment BEFORE the password is checked, so a parallel burst cannot slip more
 * guesses through than the limit; a correct password clears the count.
 */
import { KV } from "./kv_layout.ts";
import { hashKey } from "./api_key.ts";
import { reserveSlot } from "./window_slots.ts";

export const SIGNIN_LIMIT = 10;
export const SIGNIN_WINDOW_MS = 15 * 60 * 1000;

/** Takes one attempt's slot; false when the email has used all of its window's attempts. */
export function reserveAttempt(kv: Deno.Kv, email: string, now: number): Promise<boolean> {
  return reserveSlot(kv, KV.signinAttempts(hashKey(email)), SIGNIN_LIMIT, SIGNIN_WINDOW_MS, now);
}

export async function clearAttempts(kv: Deno.Kv, email: string): Promise<void> {
  await kv.delete(KV.signinAttempts(hashKey(email)));
}
