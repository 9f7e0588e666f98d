/**
 * What a restored entry under each prefix of the store's layout (metering/kv_layout.ts) must be:
 * its key's parts, and for the entries that lead from a key or an address to an account, its value.
 * Only account records were checked; any other line was written as it came, so a hand-made backup
 * could restore a key that no revocation finds (a `key_id` entry holding `[1,2]`: the key kept
 * working, and revoking it answered 404), a key answered 503 on every call (a `key_hash` entry
 * holding a string), and an account listed twice (`["account", id, "x"]`) (probe HD).
 *
 * The schedules' entries must hold an id (one holding `{"x":1}` stopped every account's watch
 * refreshes and webhook deliveries, probe HF), and a watch count a count (-1000 lifted the
 * account's watch limit). Other values are restored as they are, checked where they are read.
 * Entries under a prefix this version does not write are restored as they are: nothing reads
 * them (an earlier version's `key_form` entries among them).
 */
import { z } from "zod";
import { KV } from "../metering/kv_layout.ts";
import { AccountRecord } from "../metering/account_record.ts";

/**
 * The kinds of the key parts after the prefix ("string" or "number"), for every prefix the
 * layout writes, read off a key that the layout's own function builds for it.
 */
export const KEY_PARTS: Record<string, string[]> = Object.fromEntries([
  KV.account(""),
  KV.keyByHash(""),
  KV.keyById(""),
  KV.accountByEmail(""),
  KV.resultCache("", ""),
  KV.credential(""),
  KV.session(""),
  KV.accountSession("", ""),
  KV.alert("", ""),
  KV.outboxEntry(""),
  KV.emailToken("", ""),
  KV.signinAttempts(""),
  KV.signinDevice(""),
  KV.deviceSignins(""),
  KV.sessionPasswordChecks(""),
  KV.deviceGrants(""),
  KV.accountMails(""),
  KV.alertAddressMails(""),
  KV.clientMails(""),
  KV.clientSignins(""),
  KV.clientSignups(""),
  KV.revokedKey("", ""),
  KV.history("", "", 0, ""),
  KV.watch(""),
  KV.watchOf("", ""),
  KV.watchCount(""),
  KV.watchDue(0, ""),
  KV.webhook(""),
  KV.webhookDue(0, ""),
  KV.webhookDueOf("", 0, ""),
  KV.restoreUnfinished,
  KV.instance(""),
  KV.storeLayout,
].map((key) => [prefixOf(key), key.slice(1).map((part) => typeof part)]));

// The prefixes whose entries are checked beyond their keys, named once (each `case` below would
// otherwise build its sample key again for every line restored).
export const ACCOUNT = prefixOf(KV.account(""));
const REVOKED_KEY = prefixOf(KV.revokedKey("", ""));
const KEY_ID = prefixOf(KV.keyById(""));
export const KEY_HASH = prefixOf(KV.keyByHash(""));
const ACCOUNT_EMAIL = prefixOf(KV.accountByEmail(""));
const WATCH_DUE = prefixOf(KV.watchDue(0, ""));
const WEBHOOK_DUE = prefixOf(KV.webhookDue(0, ""));
const WEBHOOK_DUE_OF = prefixOf(KV.webhookDueOf("", 0, ""));
const WATCH_COUNT = prefixOf(KV.watchCount(""));
const RESTORE_UNFINISHED = prefixOf(KV.restoreUnfinished);

const id = z.string().min(1);
/** KV.keyById: the key's account and digest, or (written before the digest) the bare account id. */
const KeyIdEntry = z.union([
  id,
  z.object({ account_id: id, hash: z.string().regex(/^[0-9a-f]{64}$/) }),
]);
/** KV.revokedKey: a key's last state, kept for the audit (read only by listings). */
const RevokedKey = z.object({ id, status: z.literal("revoked") });
/** KV.keyByHash: the account and key a presented key value belongs to. */
const KeyLookup = z.object({ account_id: id, key_id: id });

/**
 * Why `value` under `key` is no entry this version wrote, or null. An account record is checked
 * field by field, and must be filed under its own id with each key under its own.
 */
export function entryProblem(key: Deno.KvKey, value: unknown): string | null {
  const prefix = key[0];
  if (typeof prefix !== "string" || !Object.hasOwn(KEY_PARTS, prefix)) return null;
  const parts = KEY_PARTS[prefix];
  if (key.length !== parts.length + 1) {
    return `a ${prefix} key has ${parts.length + 1} parts, not ${key.length}`;
  }
  for (let i = 0; i < parts.length; i++) {
    const kind: string = typeof key[i + 1];
    if (kind !== parts[i]) return `a ${prefix} key's part ${i + 2} must be a ${parts[i]}`;
  }
  const owner = key[1] as string;
  switch (prefix) {
    case ACCOUNT: {
      const checked = AccountRecord.safeParse(value);
      if (!checked.success) return schemaProblem("account record", checked.error);
      if (checked.data.id !== owner) return `account record: id is not the key's, ${owner}`;
      const stray = Object.entries(checked.data.keys).find(([k, v]) => v.id !== k);
      return stray ? `account record: keys.${stray[0]}: id is not ${stray[0]}` : null;
    }
    case REVOKED_KEY: {
      const checked = RevokedKey.safeParse(value);
      if (!checked.success) return schemaProblem("revoked key", checked.error);
      const keyId = key[2] as string;
      return checked.data.id === keyId ? null : `revoked key: id is not the key's, ${keyId}`;
    }
    case KEY_ID:
      return schemaProblem("key index", KeyIdEntry.safeParse(value).error);
    case KEY_HASH:
      return schemaProblem("key digest index", KeyLookup.safeParse(value).error);
    case ACCOUNT_EMAIL:
      return schemaProblem("address index", id.safeParse(value).error);
    case WATCH_DUE:
    case WEBHOOK_DUE:
    case WEBHOOK_DUE_OF:
      return schemaProblem("schedule entry", id.safeParse(value).error);
    case WATCH_COUNT:
      return schemaProblem("watch count", z.int().nonnegative().safeParse(value).error);
    case RESTORE_UNFINISHED:
      return "the mark of a restore that did not finish: the store backed up was partly written";
  }
  return null;
}

function prefixOf(key: Deno.KvKey): string {
  return key[0] as string;
}

function schemaProblem(what: string, error: z.ZodError | undefined): string | null {
  if (!error) return null;
  const issue = error.issues[0];
  return `${what}: ${issue.path.join(".") || "value"}: ${issue.message}`;
}

/**
 * Whether a whole file's key entries agree: each key an account record holds has its key index
 * entry (KV.keyById), naming that account. Checked one by one, a well-formed index entry naming
 * another account, or none at all, restored a key that worked and that revocation, which finds a
 * key by that entry, answered 404 for (probe HF).
 */
export class KeyIndexCheck {
  /** Key id → the account whose record holds it, the record's line, and whether it is active. */
  readonly #held = new Map<string, { account: string; line: number; active: boolean }>();
  /** Key id → the account its index entry names, and the digest it holds (layout 2). */
  readonly #indexed = new Map<string, { account: string; hash?: string }>();
  /** Key digest → the account and key its entry names (KV.keyByHash), and its line. */
  readonly #digests = new Map<string, { account: string; key: string; line: number }>();

  /** Notes an entry that passed entryProblem. */
  see(key: Deno.KvKey, value: unknown, line: number): void {
    if (key.length !== 2) return;
    if (key[0] === ACCOUNT) {
      const account = key[1] as string;
      const keys = (value as { keys: Record<string, { status?: string }> }).keys;
      for (const [id, k] of Object.entries(keys)) {
        this.#held.set(id, { account, line, active: k.status === "active" });
      }
    } else if (key[0] === KEY_ID) {
      const v = value as string | { account_id: string; hash: string };
      this.#indexed.set(
        key[1] as string,
        typeof v === "string" ? { account: v } : { account: v.account_id, hash: v.hash },
      );
    } else if (key[0] === KEY_HASH) {
      const v = value as { account_id: string; key_id: string };
      this.#digests.set(key[1] as string, { account: v.account_id, key: v.key_id, line });
    }
  }

  /**
   * The first key whose entries disagree, once all are seen: a key an account record holds needs
   * its key index entry naming that account, and an active one its key digest entry; a digest
   * entry must name the account and key whose index entry holds that digest. A digest entry
   * naming another account's key restored without a word, and a key then charged its calls to
   * that other account (probe HL).
   */
  problem(): { line: number; why: string } | null {
    for (const [id, { account, line }] of this.#held) {
      const named = this.#indexed.get(id)?.account;
      if (named === account) continue;
      return {
        line,
        why: named === undefined
          ? `account record: keys.${id} has no key index entry`
          : `account record: keys.${id}: its key index entry names account ${named}`,
      };
    }
    const digestOf = new Map<string, string>();
    for (const [digest, { account, key, line }] of this.#digests) {
      const why = (what: string) => ({ line, why: `key digest entry: ${what}` });
      if (digestOf.has(key)) return why(`a second digest of key ${key}`);
      digestOf.set(key, digest);
      const holder = this.#held.get(key)?.account ?? this.#indexed.get(key)?.account;
      if (holder !== undefined && holder !== account) {
        return why(`names account ${account}, but key ${key} is account ${holder}'s`);
      }
      const hash = this.#indexed.get(key)?.hash;
      if (hash !== undefined && hash !== digest) {
        return why(`key ${key}'s index entry holds another digest`);
      }
    }
    for (const [id, { line, active }] of this.#held) {
      if (active && !digestOf.has(id)) {
        return { line, why: `account record: keys.${id} has no key digest entry` };
      }
    }
    return null;
  }
}
