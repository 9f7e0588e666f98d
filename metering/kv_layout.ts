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
  /**
   * Key id → { account_id, hash }, so that a key can be revoked by its id alone, and forgotten
   * whole (its digest entry too) once it is among an account's oldest revoked keys. Entries
   * written before the digest was kept hold the bare account id.
   */
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
   * Account id, session token digest → { created_at, expires_at }, written with expireIn beside
   * the session: an account's sessions, so that it keeps at most SESSIONS_PER_ACCOUNT.
   */
  accountSession: (accountId: string, tokenHash: string): Deno.KvKey => [
    "account_session",
    accountId,
    tokenHash,
  ],
  accountSessions: (accountId: string): Deno.KvKey => ["account_session", accountId],
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
   * (kv.enqueue is not on every backend). Written with the alert, deleted on delivery. An alert
   * id names its account (metering/alerts.ts newAlert): ids are unique across accounts.
   */
  outboxEntry: (alertId: string): Deno.KvKey => ["alert_outbox", alertId],
  /** Prefix of the outbox, for the delivery loop. */
  outbox: ["alert_outbox"] as Deno.KvKey,
  /**
   * SHA-256 of a mailed token → { payload, expires_at }, written with expireIn: a sign-up waiting
   * for its address to be confirmed (the email; the password is chosen on confirming, and no
   * account exists before; links mailed by earlier versions also hold a password digest), or a
   * password reset (account id, and the password epoch it was issued under: a reset or password
   * change since makes it void). Spent by the commit that acts on it.
   */
  emailToken: (kind: string, tokenHash: string): Deno.KvKey => ["email_token", kind, tokenHash],
  /**
   * SHA-256 of a lower-cased email → { count, since }: sign-in attempts in the current 15-minute
   * window, shared by every instance, written with expireIn. The email itself is not stored.
   */
  signinAttempts: (emailHash: string): Deno.KvKey => ["signin_attempts", emailHash],
  /**
   * SHA-256 of a device token (sign_in_devices.ts) → { email: SHA-256 of the email it signed in
   * to }, written with expireIn; renewed at each sign-in from that device.
   */
  signinDevice: (tokenHash: string): Deno.KvKey => ["signin_device", tokenHash],
  /**
   * SHA-256 of a device token → { count, since }: that device's sign-in attempts in the current
   * 15-minute window, counted instead of the email's (sign_in_devices.ts), with expireIn.
   */
  deviceSignins: (tokenHash: string): Deno.KvKey => ["device_signins", tokenHash],
  /**
   * SHA-256 of a session token → { count, since }: password checks of that signed-in session (a
   * password change) in the current 15-minute window, with expireIn.
   */
  sessionPasswordChecks: (tokenHash: string): Deno.KvKey => ["session_password_checks", tokenHash],
  /** SHA-256 of a lower-cased email → { count, since }: new devices given it in the last day. */
  deviceGrants: (emailHash: string): Deno.KvKey => ["device_grants", emailHash],
  /**
   * SHA-256 of a lower-cased email → { count, since }: account mails (sign-up, reset) asked for
   * that address in the current hour, shared by every instance, written with expireIn.
   */
  accountMails: (emailHash: string): Deno.KvKey => ["account_mails", emailHash],
  /**
   * SHA-256 of a lower-cased email → { count, since }: alert-address confirmations asked for that
   * address this hour; a budget of their own, so that they cannot use up its reset mails.
   */
  alertAddressMails: (emailHash: string): Deno.KvKey => ["alert_address_mails", emailHash],
  /** SHA-256 of a client's address (or IPv6 /64) → { count, since }: its account mails this hour. */
  clientMails: (clientHash: string): Deno.KvKey => ["client_mails", clientHash],
  /** SHA-256 of a client's address (or IPv6 /64) → { count, since }: its sign-ins this window. */
  clientSignins: (clientHash: string): Deno.KvKey => ["client_signins", clientHash],
  /** SHA-256 of a client's address (or IPv6 /64) → { count, since }: its open sign-ups this hour. */
  clientSignups: (clientHash: string): Deno.KvKey => ["client_signups", clientHash],
  /**
   * A revoked key's last state (KeyState), kept for the audit trail and key lists. Revoking moves
   * the key out of the account record, which therefore holds only active keys (at most the plan's
   * max_keys) and stays far below KV's 64 KiB value limit however many keys come and go. An
   * account keeps its newest 100 (KEPT_REVOKED_KEYS in accounts.ts); older ones are deleted with
   * their indexes.
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
  /**
   * One watch (watches/store.ts): what to refresh and where to send events, its secret, its
   * schedule (`next_at`) and the watched values of its last refresh. Every change is a checked
   * commit on this record, so the scheduler's claim, a refresh's result, a delivery's note and a
   * DELETE never overwrite each other.
   */
  watch: (watchId: string): Deno.KvKey => ["watch", watchId],
  /** Account id + watch id → true: an account's watches, for GET /v1/watches and the limit. */
  watchOf: (accountId: string, watchId: string): Deno.KvKey => ["watch_of", accountId, watchId],
  watchesOf: (accountId: string): Deno.KvKey => ["watch_of", accountId],
  /**
   * Account id → how many watches it holds, changed in the commit that creates or deletes one and
   * checked there, so concurrent creations cannot pass the per-account limit.
   */
  watchCount: (accountId: string): Deno.KvKey => ["watch_count", accountId],
  /**
   * Due time (ms) + watch id → watch id: the schedule every instance scans. Exactly one entry per
   * watch, at its record's `next_at`; claiming a refresh moves it to the end of a lease, in the
   * same checked commit, so two instances never refresh one watch at once.
   */
  watchDue: (at: number, watchId: string): Deno.KvKey => ["watch_due", at, watchId],
  watchSchedule: ["watch_due"] as Deno.KvKey,
  /** Event id → an undelivered webhook event (body, attempts), written with the refresh that saw the change. */
  webhook: (eventId: string): Deno.KvKey => ["webhook", eventId],
  /** Next attempt time (ms) + event id → event id: the webhook outbox, scanned like the schedule. */
  webhookDue: (at: number, eventId: string): Deno.KvKey => ["webhook_due", at, eventId],
  webhookSchedule: ["webhook_due"] as Deno.KvKey,
  /**
   * Account id + next attempt time (ms) + event id → "event id watch id": the webhook outbox by
   * account, so that a delivery pass can take each account's due events in turn (round-robin)
   * rather than in due order across accounts, and pass over a failing watch's events unread.
   * Replaces `webhookDue`, whose entries the delivery loop moves here. Layout change: entries
   * written before November 27 hold the event id alone, which is still read; versions before then
   * take the new value for an event that is gone and drop it (README, Upgrading).
   */
  webhookDueOf: (accountId: string, at: number, eventId: string): Deno.KvKey => [
    "webhook_due_of",
    accountId,
    at,
    eventId,
  ],
  webhookDueOfAccount: (accountId: string): Deno.KvKey => ["webhook_due_of", accountId],
  webhookAccountSchedule: ["webhook_due_of"] as Deno.KvKey,
  /**
   * The store's layout (metering/store_layout.ts STORE_LAYOUT): written by the first version that
   * opens the store and raised by later ones; a version refuses a store of a later layout than
   * its own. Not state: a backup leaves it out, and the restoring version writes its own.
   */
  storeLayout: ["store_layout"] as Deno.KvKey,
  /**
   * Instance id → { catalog, started_at, expires_at } of a server running on this store, written
   * with expireIn and renewed while it runs: instances compare their plan catalogs by digest and
   * say when they differ (metering/instance_roll.ts). Not state: a backup leaves it out.
   */
  instance: (instanceId: string): Deno.KvKey => ["instance", instanceId],
  instances: ["instance"] as Deno.KvKey,
  /**
   * Written by `deno task admin restore` before its first entry and deleted after its last: a
   * store that still holds it was left partly written (a SIGKILL, a power cut), and neither the
   * server nor the admin CLI will use it (metering/unfinished_restore.ts).
   */
  restoreUnfinished: ["restore_unfinished"] as Deno.KvKey,
};
