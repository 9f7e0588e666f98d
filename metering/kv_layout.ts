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
  resultCache: (endpoint: string, paramsHash: string): Deno.KvKey => ["result_cache", endpoint, paramsHash],
};
