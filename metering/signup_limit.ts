/**
 * SIGNUP=open: one client (see routes/client_address.ts) may start at most CLIENT_SIGNUP_LIMIT
 * sign-ups an hour, counted in KV on every instance and taken before the password is hashed.
 * Each open sign-up costs a scrypt derivation (~50 ms, 16 MiB; two at once for the whole process)
 * and may create an account with the free plan's credits: unbounded, one client could keep the
 * password work busy, so that everyone's sign-ins wait or are refused, and collect free credits
 * without end.
 */
import { KV } from "./kv_layout.ts";
import { type Client, clientWindows, reserveSlots } from "./window_slots.ts";

export const CLIENT_SIGNUP_LIMIT = 20;
export const SIGNUP_WINDOW_MS = 60 * 60 * 1000;

/** Takes one of the client's sign-ups for this hour; false when it has had them all. */
export async function reserveSignup(
  kv: Deno.Kv,
  client: Client,
  now: number,
): Promise<boolean> {
  const byClient = clientWindows(client, KV.clientSignups, CLIENT_SIGNUP_LIMIT);
  return (await reserveSlots(kv, byClient, SIGNUP_WINDOW_MS, now)) === null;
}
