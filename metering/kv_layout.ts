/**
 * Every Deno KV key Shelf writes, and why it exists. Nothing else in the code spells a key.
 */
export const KV = {
  /**
   * The whole mutable state of one account: plan, status, keys (with their one-second rate
   * windows and last-used times), credit period and usage. One record, so that a single
   * versionstamp check in a commit covers everything a call depends on (≤10 checks per commit
   * on every KV backend), and one commit can admit and charge a whole batch of calls.
   */
  account: (accountId: string): Deno.KvKey => ["account", accountId],
  /** SHA-256 of a key value → { account_id, key_id }. Never changes once written, so it is cached. */
  keyByHash: (sha256: string): Deno.KvKey => ["key_hash", sha256],
  /** Key id → account id, so that a key can be revoked by its id alone. */
  keyById: (keyId: string): Deno.KvKey => ["key_id", keyId],
  /** Lower-cased email → account id; written with check(versionstamp null) so emails are unique. */
  accountByEmail: (email: string): Deno.KvKey => ["account_email", email],
  /** Prefix of every account record, for listing. */
  accounts: ["account"] as Deno.KvKey,
  /**
   * Endpoint name + SHA-256 of its sorted parameters → { at, json } of a recent answer, written
   * with expireIn (the endpoint's TTL): repeats are answered without an upstream fetch.
   */
  resultCache: (
    endpoint: string,
    paramsHash: string,
  ): Deno.KvKey => ["result_cache", endpoint, paramsHash],
  /**
   * Account id → dashboard password (scrypt digest, salt, parameters). Apart from the account
   * record, which the meter reads and caches on every call, so the digest never travels with it.
   */
  credential: (accountId: string): Deno.KvKey => ["credential", accountId],
  /**
   * SHA-256 of a dashboard session token → { account_id, csrf, expires_at }, written with
   * expireIn. Only the digest is the key, so a copy of the store signs nobody in.
   */
  session: (tokenHash: string): Deno.KvKey => ["session", tokenHash],
  /**
   * One usage alert (80% or 100% of a period's credits) of an account, with its delivery state.
   * Written in the same commit as the charge that crossed the threshold; kept after delivery so
   * the dashboard can list it.
   */
  alert: (accountId: string, alertId: string): Deno.KvKey => ["alert", accountId, alertId],
  /** Prefix of an account's alerts, for the dashboard. */
  alerts: (accountId: string): Deno.KvKey => ["alert", accountId],
  /**
   * Alert id → account id while the alert is undelivered: the outbox the delivery loop scans
   * (kv.enqueue is not on every backend). Written with the alert, deleted on delivery.
   */
  outboxEntry: (alertId: string): Deno.KvKey => ["alert_outbox", alertId],
  /** Prefix of the outbox, for the delivery loop. */
  outbox: ["alert_outbox"] as Deno.KvKey,
  /**
   * SHA-256 of a mailed token → { payload, expires_at }, written with expireIn: a sign-up waiting
   * for its address to be confirmed (email and password digest; no account exists before), or a
   * password reset (account id). Spent by the commit that acts on it.
   */
  emailToken: (kind: string, tokenHash: string): Deno.KvKey => ["email_token", kind, tokenHash],
  /**
   * SHA-256 of a lower-cased email → { count, since }: sign-in attempts in the current 15-minute
   * window, shared by every instance, written with expireIn. The email itself is not stored.
   */
  signinAttempts: (emailHash: string): Deno.KvKey => ["signin_attempts", emailHash],
  /**
   * A revoked key's last state (KeyState), kept for the audit trail and key lists. Revoking moves
   * the key out of the account record, which therefore holds only active keys (at most the plan's
   * max_keys) and stays far below KV's 64 KiB value limit however many keys come and go.
   */
  revokedKey: (accountId: string, keyId: string): Deno.KvKey => ["revoked_key", accountId, keyId],
  /** Prefix of an account's revoked keys. */
  revokedKeys: (accountId: string): Deno.KvKey => ["revoked_key", accountId],
  /**
   * One observation of a product (price, stock, rating, reviews, ranks) made by a successful
   * details fetch, keyed by marketplace, ASIN and time so that a reverse listing of the prefix
   * reads them newest first. At most HISTORY_POINTS per product are kept: older ones are deleted
   * as new ones arrive (upstream/price_history.ts). Not written with HISTORY=off.
   */
  history: (marketplace: string, asin: string, at: number, id: string): Deno.KvKey => [
    "history",
    marketplace,
    asin,
    at,
    id,
  ],
  /** Prefix of one product's observations. */
  historyOf: (marketplace: string, asin: string): Deno.KvKey => ["history", marketplace, asin],
};
