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
/**
 * Sessions an account keeps; a new one past this ends its oldest. A remembered browser signs in
 * past the per-client limits, so one account holder signing in again and again stored a session a
 * time without end (33 a second from one client: about 1 GB of store a day, each kept a week).
 */
export const SESSIONS_PER_ACCOUNT = 20;

interface SessionEntry {
  created_at: number;
  /** Read by `admin backup`, which restores an entry with the life it has left. */
  expires_at: number;
}

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
  const hash = hashKey(token);
  const entry: SessionEntry = { created_at: now, expires_at: session.expires_at };
  await kv.atomic()
    .set(KV.session(hash), session, { expireIn: SESSION_MS })
    .set(KV.accountSession(accountId, hash), entry, { expireIn: SESSION_MS })
    .commit();
  await endOldestSessions(kv, accountId, now);
  return { token, session };
}

/** Ends the account's sessions past SESSIONS_PER_ACCOUNT, oldest first, and forgets expired ones. */
async function endOldestSessions(kv: Deno.Kv, accountId: string, now: number): Promise<void> {
  const live: { hash: string; created: number }[] = [];
  const gone: string[] = [];
  for await (
    const e of kv.list<SessionEntry>({ prefix: KV.accountSessions(accountId) })
  ) {
    const hash = String(e.key[2]);
    if ((e.value?.expires_at ?? 0) > now) live.push({ hash, created: e.value.created_at });
    else gone.push(hash);
  }
  live.sort((a, b) => a.created - b.created);
  gone.push(...live.slice(0, Math.max(0, live.length - SESSIONS_PER_ACCOUNT)).map((s) => s.hash));
  // In commits of 50 (100 mutations): every KV target takes that many.
  for (let i = 0; i < gone.length; i += 50) {
    const op = kv.atomic();
    for (const hash of gone.slice(i, i + 50)) {
      op.delete(KV.session(hash)).delete(KV.accountSession(accountId, hash));
    }
    await op.commit();
  }
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
  if (!token || !/^[0-9a-f]{64}$/.test(token)) return;
  const hash = hashKey(token);
  const s = (await kv.get<Session>(KV.session(hash))).value;
  const op = kv.atomic().delete(KV.session(hash));
  if (s) op.delete(KV.accountSession(s.account_id, hash));
  await op.commit();
}
