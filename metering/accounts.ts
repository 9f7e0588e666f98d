/**
 * Accounts and keys as the admin API, the CLI and the dashboard change them. Every change goes
 * through transact(), so it is atomic with the metering of calls on the same record.
 */
import { cleanText } from "../parsers/control_chars.ts";
import { KV } from "./kv_layout.ts";
import type { Clock } from "./clock.ts";
import { type Plans, SIGNUP_PLAN } from "./plans.ts";
import {
  type AccountState,
  activeKeyCount,
  type AlertSettings,
  alertSettings,
  type KeyState,
  rollPeriod,
} from "./account_state.ts";
import { generateKey, hashKey, keyDisplayParts, type KeyMode, randomHex } from "./api_key.ts";
import { digestHex, sha256Words } from "./sha256.ts";
import { DigestMap } from "./digest_map.ts";
import { readAccount, transact } from "./transact.ts";

/** Revoked keys an account keeps for its audit trail; older ones are forgotten (see #pruneRevoked). */
export const KEPT_REVOKED_KEYS = 100;
/**
 * Once-tokens of key creations kept per account (createKey): enough for the few forms a person
 * may have open and resend; each token is 12 characters of a record every commit serializes.
 */
export const KEPT_ONCE_TOKENS = 4;

/** What KV.keyById holds: the account, and the key's digest so the key can be forgotten whole. */
interface KeyIdEntry {
  account_id: string;
  hash: string;
}

/** The account of a KV.keyById entry; entries written before it held the digest are the bare id. */
function keyIdAccount(entry: KeyIdEntry | string | null): string | null {
  return typeof entry === "string" ? entry : entry?.account_id ?? null;
}

/** A refused change, with the HTTP status and code the admin API answers with. */
export class AccountError extends Error {
  readonly status: number;
  readonly code: string;
  constructor(status: number, code: string, message: string) {
    super(message);
    this.name = "AccountError";
    this.status = status;
    this.code = code;
  }
}

export interface KeyLookup {
  account_id: string;
  key_id: string;
}

// A plain address only: a dot-atom local part (RFC 5322's atext) and a host name whose last label
// holds a letter. Mail libraries read more into a looser string ("x<a@b.example>", "l:a@b.example;",
// "a@b.example,c", comments, quoted parts, "[127.0.0.1]"), delivering to an address other than
// the one the per-address mail limit counts, or to a host of the sender's choosing.
// (\x27 and \x60 are the quote and the backquote of atext.)
const LOCAL = /^[a-z0-9!#$%&\x27*+/=?^_\x60{|}~-]+(?:\.[a-z0-9!#$%&\x27*+/=?^_\x60{|}~-]+)*$/;
const DOMAIN = /^(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)*[a-z0-9-]*[a-z][a-z0-9-]*$/;
const LABEL = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;

/** The address as accounts store it (trimmed, lower case), or null when it is not a plain one. */
export function normalizeEmail(email: unknown): string | null {
  if (typeof email !== "string") return null;
  const normalized = email.trim().toLowerCase();
  const at = normalized.lastIndexOf("@");
  const local = normalized.slice(0, at), domain = normalized.slice(at + 1);
  const plain = at > 0 && normalized.length <= 254 && local.length <= 64 && LOCAL.test(local) &&
    DOMAIN.test(domain) && domain.split(".").every((l) => LABEL.test(l));
  return plain ? normalized : null;
}

// Names that reach hosts of the operator's own network or none, never a public mailbox, and a
// last label a resolver reads as an address ("0xa9fea9fe" is 169.254.169.254 to getaddrinfo):
// anyone may sign up, and the relay was handed root@localhost or b@0xa9fea9fe (probe EV).
const PRIVATE_NAME =
  /(?:^|\.)(?:localhost|localdomain|local|internal|intranet|lan|home|corp|arpa|invalid|onion)$/;
const NUMERIC_LABEL = /(?:^|\.)(?:0x[0-9a-f]*|\d+)$/;

/**
 * An address an account may be given, where its mail goes (sign-up, alerts): a plain one
 * (normalizeEmail) whose host is a name of the public internet, of two labels or more.
 */
export function mailableEmail(email: unknown): string | null {
  const normalized = normalizeEmail(email);
  const domain = normalized?.slice(normalized.lastIndexOf("@") + 1) ?? "";
  const open = domain.includes(".") && !PRIVATE_NAME.test(domain) && !NUMERIC_LABEL.test(domain);
  return open ? normalized : null;
}

/**
 * Addresses accounts may hold: earlier versions stored looser ones, which must still sign in.
 * Longer text names no account, and would not fit in a store key.
 */
const MAX_STORED_EMAIL = 320;
/** The ids this module makes are short; a longer one (from a URL) names nothing. */
const MAX_ID = 64;
const CREATE_ATTEMPTS = 5;

/** A new key's mode and name as asked for, or the 422 that refuses them. */
export function keyOptions(
  opts: { mode?: string; name?: string },
): { mode: KeyMode; name: string } {
  const mode = (opts.mode ?? "live") as KeyMode;
  if (mode !== "live" && mode !== "test") {
    throw new AccountError(422, "invalid_mode", "mode must be 'live' or 'test'");
  }
  if (opts.name !== undefined && typeof opts.name !== "string") {
    throw new AccountError(422, "invalid_name", "name must be a string");
  }
  // Shown in the dashboard and printed by the CLI to the operator's terminal: no control
  // characters (DEL and C1 ones such as U+009B, a terminal's CSI, included).
  return { mode, name: cleanText(opts.name ?? "", 80) };
}

export class Accounts {
  readonly #kv: Deno.Kv;
  readonly #plans: Plans;
  readonly #clock: Clock;
  /** Digest → ids never changes once written, so every lookup after the first is free. */
  readonly #lookups = new DigestMap<KeyLookup>();
  /** Told of every change this process makes, so caches elsewhere can drop the record. */
  onChange: (accountId: string) => void = () => {};

  constructor(kv: Deno.Kv, plans: Plans, clock: Clock) {
    this.#kv = kv;
    this.#plans = plans;
    this.#clock = clock;
  }

  /** `extend` adds writes to the creating commit (the dashboard's sign-up stores the password there). */
  async create(
    email: string,
    planId = SIGNUP_PLAN,
    extend?: (op: Deno.AtomicOperation, account: AccountState) => void,
  ): Promise<AccountState> {
    const normalized = mailableEmail(email);
    if (!normalized) {
      throw new AccountError(422, "invalid_email", "email must be an address on the internet");
    }
    this.#plan(planId);
    const now = this.#clock.now();
    const state: AccountState = {
      id: `acc_${randomHex(8)}`,
      email: normalized,
      plan: planId,
      status: "active",
      created_at: now,
      plan_started_at: now,
      period_start: now,
      used: 0,
      keys: {},
      recent_batches: [],
    };
    // A commit may throw without a conflict ("database is locked" when another process on the
    // same file wrote first): it is tried again, unless the re-read shows it landed after all.
    for (let attempt = 1;; attempt++) {
      const op = this.#kv.atomic()
        .check({ key: KV.accountByEmail(normalized), versionstamp: null })
        .check({ key: KV.account(state.id), versionstamp: null })
        .set(KV.account(state.id), state)
        .set(KV.accountByEmail(normalized), state.id);
      extend?.(op, state);
      let r: Deno.KvCommitResult | Deno.KvCommitError;
      try {
        r = await op.commit();
      } catch (e) {
        if ((await this.#kv.get(KV.accountByEmail(normalized))).value === state.id) return state;
        if (attempt >= CREATE_ATTEMPTS) throw e;
        await new Promise((done) => setTimeout(done, Math.random() * 10 * attempt));
        continue;
      }
      if (!r.ok) {
        throw new AccountError(409, "email_taken", `an account with email ${normalized} exists`);
      }
      return state;
    }
  }

  async get(accountId: string): Promise<AccountState> {
    const v = accountId.length <= MAX_ID ? await readAccount(this.#kv, accountId) : null;
    if (!v) throw notFound("account", accountId);
    rollPeriod(v.state, this.#clock.now());
    return v.state;
  }

  /** Accounts in pages of `limit` (by id), or only the one with `email`; `next_cursor` null at the end. */
  async list(
    opts: { email?: string; cursor?: string; limit?: number } = {},
  ): Promise<{ accounts: AccountState[]; next_cursor: string | null }> {
    if (opts.email !== undefined) {
      const id = await this.idByEmail(opts.email);
      return { accounts: id ? [await this.get(id)] : [], next_cursor: null };
    }
    const limit = opts.limit ?? 100;
    const accounts: AccountState[] = [];
    let iter: Deno.KvListIterator<AccountState>;
    try {
      iter = this.#kv.list<AccountState>({ prefix: KV.accounts }, {
        limit,
        cursor: opts.cursor || undefined,
      });
      for await (const e of iter) {
        rollPeriod(e.value, this.#clock.now());
        accounts.push(e.value);
      }
    } catch {
      throw new AccountError(
        422,
        "invalid_cursor",
        "cursor must be a next_cursor from an earlier page",
      );
    }
    return { accounts, next_cursor: accounts.length === limit && iter.cursor ? iter.cursor : null };
  }

  async idByEmail(email: string): Promise<string | null> {
    const normalized = email.trim().toLowerCase();
    if (normalized.length > MAX_STORED_EMAIL) return null;
    return (await this.#kv.get<string>(KV.accountByEmail(normalized))).value;
  }

  /**
   * Changes plan and/or status. A plan change starts a new period now; usage so far carries over.
   * A plan with fewer keys keeps the newest active keys up to its limit and revokes the rest, in
   * the same commit; their ids are in `revoked` (issue 13.13).
   */
  async update(
    accountId: string,
    change: { plan?: string; status?: string },
  ): Promise<AccountState & { revoked: string[] }> {
    if (change.plan !== undefined) this.#plan(change.plan);
    if (change.status !== undefined && change.status !== "active" && change.status !== "inactive") {
      throw new AccountError(422, "invalid_status", "status must be 'active' or 'inactive'");
    }
    if (accountId.length > MAX_ID) throw notFound("account", accountId);
    const { result } = await transact(this.#kv, accountId, null, (s) => {
      if (!s) throw notFound("account", accountId);
      const now = this.#clock.now();
      rollPeriod(s, now);
      const planChanged = change.plan !== undefined && change.plan !== s.plan;
      if (planChanged) {
        s.plan = change.plan!;
        s.plan_started_at = now;
        // Usage carries over (INTERFACE.md), so a call charged before and refunded after gives
        // its credit back here: addressed to the old period, its refund was dropped.
        // Only the oldest period carried from bounds which refunds still land (meter.ts): with
        // the last four kept, a sixth plan change during a call dropped its refunds (probe CK).
        s.carried_from = [Math.min(s.period_start, ...(s.carried_from ?? []))];
        s.period_start = now;
        s.alerted = []; // a new period: each alert may be sent once more, against the new allowance
      }
      if (change.status !== undefined) s.status = change.status as AccountState["status"];
      // Only a plan change trims keys, to the new plan's (known) limit: a status change on an
      // account whose plan a PLANS_FILE no longer lists revoked every key, for a limit of 0 (probe
      // CP).
      const max = planChanged ? this.#plans.get(s.plan)!.max_keys : Infinity;
      const over = Object.values(s.keys).filter((k) => k.status === "active")
        .sort((a, b) => b.created_at - a.created_at || b.id.localeCompare(a.id))
        .slice(max);
      const gone = over.map((k) => this.#moveOut(s, k, now));
      return {
        next: s,
        result: { ...s, revoked: over.map((k) => k.id) },
        extend: gone.length ? (op) => gone.forEach((g) => g(op)) : undefined,
      };
    });
    this.onChange(accountId);
    if (result.revoked.length) await this.#pruneRevoked(accountId);
    return result;
  }

  /**
   * Revokes `key` by moving it out of the record into its audit entry (KV.revokedKey): the
   * record keeps only active keys, so its size is bounded by the plan's max_keys.
   */
  #moveOut(s: AccountState, key: KeyState, now: number): (op: Deno.AtomicOperation) => void {
    delete s.keys[key.id];
    // The newest window, the fullest of its second. A window a fast-clock instance opened ahead
    // is the newest too: the revoked key was held to it (windows only move forward, issue 13.6),
    // and so is the key that replaces it. Dropping it let rotation between instances whose clocks
    // differ open a fresh window every time (probes FE, FF, FG).
    const w = s.retired_window;
    if (
      key.win_count > 0 &&
      (!w || key.win_sec > w.sec || (key.win_sec === w.sec && key.win_count > w.count))
    ) {
      s.retired_window = { sec: key.win_sec, count: key.win_count };
    }
    const revoked: KeyState = {
      ...key,
      status: "revoked",
      revoked_at: key.revoked_at ?? now,
      win_sec: 0,
      win_count: 0,
    };
    return (op) => op.set(KV.revokedKey(s.id, key.id), revoked);
  }

  /**
   * Forgets the oldest revoked keys beyond KEPT_REVOKED_KEYS: their audit entries and both
   * indexes. Without it, creating and revoking keys in a loop grew the store without bound
   * (about 880 bytes a cycle, 60 cycles a second from one free account). A forgotten key is an
   * unknown key, which gets the same 401 as a revoked one.
   */
  async #pruneRevoked(accountId: string): Promise<void> {
    const revoked: KeyState[] = [];
    for await (const e of this.#kv.list<KeyState>({ prefix: KV.revokedKeys(accountId) })) {
      revoked.push(e.value);
    }
    if (revoked.length <= KEPT_REVOKED_KEYS) return;
    revoked.sort((a, b) =>
      (a.revoked_at ?? 0) - (b.revoked_at ?? 0) || a.created_at - b.created_at
    );
    for (const key of revoked.slice(0, revoked.length - KEPT_REVOKED_KEYS)) {
      const index = (await this.#kv.get<KeyIdEntry | string>(KV.keyById(key.id))).value;
      const op = this.#kv.atomic().delete(KV.revokedKey(accountId, key.id)).delete(
        KV.keyById(key.id),
      );
      // Keys made before the index carried the digest leave their digest entry behind.
      if (index && typeof index === "object") op.delete(KV.keyByHash(index.hash));
      await op.commit();
    }
  }

  /** Every key of the account, active ones from the record and revoked ones from their audit entries. */
  async listKeys(accountId: string): Promise<KeyState[]> {
    const account = await this.get(accountId);
    const keys = Object.values(account.keys);
    for await (
      const e of this.#kv.list<KeyState>({ prefix: KV.revokedKeys(accountId) }, { limit: 1000 })
    ) keys.push(e.value);
    return keys.sort((a, b) => b.created_at - a.created_at);
  }

  /**
   * Turns the 80% / 100% alerts on or off and sets where they go (null: the account's email).
   * With `ifAsked`, only while the settings have not changed since that count (a confirmation
   * link's): else AccountError 409 `stale`.
   */
  async updateAlerts(
    accountId: string,
    change: Partial<Omit<AlertSettings, "asked">>,
    ifAsked?: number,
  ): Promise<AccountState> {
    let email = change.email;
    if (email !== undefined && email !== null) {
      if (String(email).trim() === "") email = null;
      else if (!(email = mailableEmail(email))) {
        throw new AccountError(
          422,
          "invalid_email",
          "the alert address must be an address on the internet",
        );
      }
    }
    if (accountId.length > MAX_ID) throw notFound("account", accountId);
    const { result } = await transact(this.#kv, accountId, null, (s) => {
      if (!s) throw notFound("account", accountId);
      const cur = alertSettings(s);
      if (ifAsked !== undefined && (cur.asked ?? 0) !== ifAsked) {
        throw new AccountError(409, "stale", "the alert settings changed since the link was sent");
      }
      s.alerts = {
        at80: change.at80 ?? cur.at80,
        at100: change.at100 ?? cur.at100,
        email: email === undefined ? cur.email : email,
        confirmed: change.confirmed === undefined ? cur.confirmed ?? null : change.confirmed,
        asked: (cur.asked ?? 0) + 1,
      };
      return { next: s, result: s };
    });
    this.onChange(accountId);
    return result;
  }

  /**
   * Creates a key; its value is in the answer and nowhere else, ever. `once`: a token this
   * creation may be made with only once (the dashboard's form id, so that a resent form creates no
   * second key). The last KEPT_ONCE_TOKENS are kept in the account record,
   * written in the key's own commit: nothing else grows however many keys come and go.
   */
  async createKey(
    accountId: string,
    opts: { mode?: string; name?: string; once?: string } = {},
  ): Promise<{ key: KeyState; value: string }> {
    const { mode, name } = keyOptions(opts);
    const value = generateKey(mode);
    const hash = hashKey(value);
    const keyId = `key_${randomHex(8)}`;
    if (accountId.length > MAX_ID) throw notFound("account", accountId);
    const { result } = await transact(this.#kv, accountId, null, (s) => {
      if (!s) throw notFound("account", accountId);
      if (opts.once !== undefined && s.key_once?.includes(opts.once)) {
        throw new AccountError(
          409,
          "already_created",
          "this form was sent before, and its key was created then",
        );
      }
      const plan = this.#plans.get(s.plan);
      // A plan this process's catalog lacks (the admin CLI run without the server's PLANS_FILE)
      // read as one allowing 0 keys (probe DG).
      if (!plan) {
        throw new AccountError(
          409,
          "unknown_plan",
          `the account's plan ${s.plan} is not in this catalog (plans: ${
            this.#plans.ids().join(", ")
          }); run with the server's PLANS_FILE`,
        );
      }
      const max = plan.max_keys;
      if (activeKeyCount(s) >= max) {
        throw new AccountError(
          409,
          "key_limit_reached",
          `the ${s.plan} plan allows ${max} active key${max === 1 ? "" : "s"}; revoke one first`,
        );
      }
      // The newest window a revoked key of the account had, which the new key replaces (probe ER:
      // a fresh window per key gave a free account 10 calls a second by rotating it). One of an
      // earlier second opens anew at the key's first call, as any window does.
      const now = this.#clock.now();
      const inherited = s.retired_window ?? { sec: 0, count: 0 };
      const key: KeyState = {
        id: keyId,
        name,
        mode,
        ...keyDisplayParts(value),
        status: "active",
        created_at: now,
        revoked_at: null,
        last_used_at: null,
        win_sec: inherited.sec,
        win_count: inherited.count,
      };
      s.keys[keyId] = key;
      if (opts.once !== undefined) {
        s.key_once = [opts.once, ...(s.key_once ?? [])].slice(0, KEPT_ONCE_TOKENS);
      }
      const lookup: KeyLookup = { account_id: accountId, key_id: keyId };
      return {
        next: s,
        result: key,
        extend: (op) =>
          op.check({ key: KV.keyByHash(hash), versionstamp: null })
            .set(KV.keyByHash(hash), lookup)
            .set(KV.keyById(keyId), { account_id: accountId, hash } satisfies KeyIdEntry),
      };
    });
    this.onChange(accountId);
    return { key: result, value };
  }

  async revokeKey(keyId: string): Promise<KeyState> {
    if (keyId.length > MAX_ID) throw notFound("key", keyId);
    const accountId = keyIdAccount(
      (await this.#kv.get<KeyIdEntry | string>(KV.keyById(keyId))).value,
    );
    if (!accountId) throw notFound("key", keyId);
    const { result } = await transact(this.#kv, accountId, null, (s) => {
      if (!s) throw notFound("key", keyId);
      const key = s.keys[keyId];
      if (!key) return { next: null, result: null };
      const now = this.#clock.now();
      // Records written before revoked keys moved out may still hold some: they leave too.
      const legacy = Object.values(s.keys).filter((k) => k.status === "revoked" && k.id !== keyId);
      const writes = [key, ...legacy].map((k) => this.#moveOut(s, k, now));
      const result: KeyState = { ...key, status: "revoked", revoked_at: key.revoked_at ?? now };
      return { next: s, result, extend: (op) => writes.forEach((w) => w(op)) };
    });
    this.onChange(accountId);
    if (result) {
      await this.#pruneRevoked(accountId);
      return result;
    }
    // Revoked before: its audit entry answers (revoking twice changes nothing).
    const audit = (await this.#kv.get<KeyState>(KV.revokedKey(accountId, keyId))).value;
    if (!audit) throw notFound("key", keyId);
    return audit;
  }

  /**
   * The account and key a presented key value belongs to, or null for an unknown value. A key
   * seen before is answered at once rather than through a promise: every metered call asks.
   */
  lookupKey(value: string): KeyLookup | Promise<KeyLookup | null> {
    const digest = sha256Words(value);
    return this.#lookups.get(digest) ?? this.#readLookup(digest.slice(0, 8));
  }

  async #readLookup(digest: Int32Array): Promise<KeyLookup | null> {
    const found = (await this.#kv.get<KeyLookup>(KV.keyByHash(digestHex(digest)))).value;
    if (found) this.#lookups.set(digest, found);
    return found;
  }

  #plan(planId: string) {
    const plan = this.#plans.get(planId);
    if (!plan) {
      throw new AccountError(
        422,
        "unknown_plan",
        `plan must be one of ${this.#plans.ids().join(", ")}`,
      );
    }
    return plan;
  }
}

function notFound(what: string, id: string): AccountError {
  const shown = id.length > MAX_ID ? `${id.slice(0, MAX_ID)}…` : id;
  return new AccountError(404, "not_found", `no ${what} with id ${shown}`);
}
