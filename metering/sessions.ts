/**
 * Dashboard sessions in KV: the cookie carries a random token, the store keeps only its SHA-256
 * under KV.session with expireIn, plus the session's CSRF token. Expiry is also checked on read,
 * since KV deletes expired entries only eventually.
 */
import { KV } from "./kv_layout.ts";
import { hashKey, randomHex } from "./api_key.ts";

export interface Session {
  account_id: string;
  /** The per-session CSRF token every dashboard form carries. */
  csrf: string;
  created_at: number;
  expires_at: number;
  /** The password epoch it was made under (passwords.ts); a later epoch ends it. */
  epoch?: number;
}

export const SESSION_MS = 7 * 24 * 3600 * 1000;

export async function createSession(
  kv: Deno.Kv,
  accountId: string,
  now: number,
  epoch = 0,
): Promise<{ token: string; session: Session }> {
  const token = randomHex(32);
  const session: Session = {
    account_id: accountId,
    csrf: randomHex(32),
    created_at: now,
    expires_at: now + SESSION_MS,
    epoch,
  };
  await kv.set(KV.session(hashKey(token)), session, { expireIn: SESSION_MS });
  return { token, session };
}

export async function readSession(
  kv: Deno.Kv,
  token: string | undefined,
  now: number,
): Promise<Session | null> {
  if (!token || !/^[0-9a-f]{64}$/.test(token)) return null;
  const s = (await kv.get<Session>(KV.session(hashKey(token)))).value;
  return s && s.expires_at > now ? s : null;
}

export async function deleteSession(kv: Deno.Kv, token: string | undefined): Promise<void> {
  if (token && /^[0-9a-f]{64}$/.test(token)) await kv.delete(KV.session(hashKey(token)));
}
