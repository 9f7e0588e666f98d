/**
 * Single-use, expiring tokens sent by mail: the sign-up confirmation link, the password reset
 * link and the link that confirms an address for usage alerts. The link carries a random token; the store keeps only its SHA-256 (KV.emailToken), with
 * expireIn, so a copy of the store confirms nothing. A token is spent by the same atomic commit
 * that does what it allows (create the account, set the password), checked against the entry's
 * versionstamp: two clicks race, one wins.
 */
import { KV } from "./kv_layout.ts";
import { hashKey, randomHex } from "./api_key.ts";

export type TokenKind = "signup" | "reset" | "alert";

export const TOKEN_TTL_MS: Record<TokenKind, number> = {
  signup: 24 * 3600 * 1000,
  reset: 3600 * 1000,
  alert: 24 * 3600 * 1000,
};

interface Stored<T> {
  payload: T;
  expires_at: number;
}

export async function issueToken<T>(
  kv: Deno.Kv,
  kind: TokenKind,
  payload: T,
  now: number,
): Promise<string> {
  const token = randomHex(32);
  const entry: Stored<T> = { payload, expires_at: now + TOKEN_TTL_MS[kind] };
  await kv.set(KV.emailToken(kind, hashKey(token)), entry, { expireIn: TOKEN_TTL_MS[kind] });
  return token;
}

export interface PendingToken<T> {
  payload: T;
  /** Adds the token's check and deletion to a commit: the commit fails if it was spent meanwhile. */
  spend(op: Deno.AtomicOperation): Deno.AtomicOperation;
}

/** The token's payload while it is unspent and unexpired, else null. */
export async function readToken<T>(
  kv: Deno.Kv,
  kind: TokenKind,
  token: string,
  now: number,
): Promise<PendingToken<T> | null> {
  if (!/^[0-9a-f]{64}$/.test(token)) return null;
  const key = KV.emailToken(kind, hashKey(token));
  const entry = await kv.get<Stored<T>>(key);
  if (!entry.value || entry.value.expires_at <= now) return null;
  return {
    payload: entry.value.payload,
    spend: (op) => op.check({ key, versionstamp: entry.versionstamp }).delete(key),
  };
}
