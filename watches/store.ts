/**
 * Watches and their webhook events in KV (keys in metering/kv_layout.ts). Each watch has one
 * schedule entry at its `next_at`; an instance claims a due refresh by moving that entry to the
 * end of a lease in a commit checked against both the record and the entry, so of two instances
 * scanning the same schedule only one wins, and a refresh whose instance died is claimed again
 * once its lease ends. Events wait in an outbox claimed the same way, kept by account so that
 * deliveries can take the accounts in turn; a watch has at most MAX_PENDING_EVENTS of them.
 */
import { KV } from "../metering/kv_layout.ts";
import type { DeliveryNote, WatchedValues, WatchField } from "../schemas/watches.ts";
import { randomHex } from "../metering/api_key.ts";
import { newWatchSecret } from "./signature.ts";
import { TooMuchContention } from "../metering/transact.ts";
import { whileLocked } from "../core/lock_backoff.ts";
import { KeyTurns } from "../core/key_turns.ts";

export interface Watch {
  id: string;
  account_id: string;
  /** The key that created it: refreshes are admitted and charged as that key's details calls. */
  key_id: string;
  asin: string;
  marketplace: string;
  zip: string | null;
  every_seconds: number;
  webhook_url: string;
  on: WatchField[];
  secret: string;
  created_at: number;
  next_at: number;
  status: "active" | "paused";
  paused_reason: string | null;
  /** Refreshes in a row deferred for the key's rate window (each waits twice the one before). */
  rate_deferrals?: number;
  last: WatchedValues | null;
  last_refresh_at: number | null;
  refreshes: number;
  last_error: string | null;
  deliveries: DeliveryNote[];
  /**
   * The watch's undelivered events, oldest first, with the attempts each has finished: at most
   * MAX_PENDING_EVENTS; a new event past that drops the oldest. Absent on records written before
   * the bound (their events were not counted).
   */
  pending?: PendingEvent[];
}

export interface PendingEvent {
  id: string;
  attempts: number;
}

export interface Delivery {
  id: string;
  watch_id: string;
  account_id: string;
  /** The exact JSON that is signed and sent. */
  body: string;
  created_at: number;
  attempts: number;
  next_at: number;
}

/** A new watch of `what`, with its id and secret; its first refresh is due at once. */
export function newWatch(
  what: Pick<
    Watch,
    | "account_id"
    | "key_id"
    | "asin"
    | "marketplace"
    | "zip"
    | "every_seconds"
    | "webhook_url"
    | "on"
  >,
  now: number,
): Watch {
  return {
    ...what,
    id: `wat_${randomHex(8)}`,
    secret: newWatchSecret(),
    created_at: now,
    // The first refresh only records the values later ones compare with: due at once.
    next_at: now,
    status: "active",
    paused_reason: null,
    last: null,
    last_refresh_at: null,
    refreshes: 0,
    last_error: null,
    deliveries: [],
    pending: [],
  };
}

/** Delivery attempts kept on a watch for the API and the dashboard. */
export const DELIVERY_NOTES = 20;

/**
 * Undelivered events one watch may have: a new event past this drops the oldest (noted on the
 * watch), so the outbox cannot grow without bound and one receiver gets at most this many
 * events' retries per watch.
 */
export const MAX_PENDING_EVENTS = 20;

/** `note` first among the watch's notes, the oldest beyond DELIVERY_NOTES dropped. */
export function withNote(w: Watch, note: DeliveryNote): DeliveryNote[] {
  return [note, ...w.deliveries].slice(0, DELIVERY_NOTES);
}

/**
 * An account's watch creations and deletions take turns in this process: each changes the
 * account's `watch_count` with a checked commit, and 5,000 creations at once made each one that
 * got through cost about as many failed commits, every account's paid calls waiting 0.4–1 s behind
 * them for the 26 s of the burst (probe Z).
 */
const accountTurns = new KeyTurns();

/** Creates `w` unless its account already holds `max` watches; false then. */
export function createWatch(kv: Deno.Kv, w: Watch, max: number): Promise<boolean> {
  return accountTurns.run(w.account_id, () => createInTurn(kv, w, max));
}

async function createInTurn(kv: Deno.Kv, w: Watch, max: number): Promise<boolean> {
  for (let attempt = 0; attempt < 50; attempt++) {
    // After a commit that did not land as far as was known: the watch's id is new and random, so
    // a watch holding it is this one (a remote store's lost reply).
    if (attempt > 0 && (await kv.get(KV.watch(w.id))).versionstamp) return true;
    const count = await kv.get<number>(KV.watchCount(w.account_id));
    const n = count.value ?? 0;
    if (n >= max) return false;
    const op = kv.atomic()
      .check(count)
      .check({ key: KV.watch(w.id), versionstamp: null })
      .set(KV.watchCount(w.account_id), n + 1)
      .set(KV.watch(w.id), w)
      .set(KV.watchOf(w.account_id, w.id), true)
      .set(KV.watchDue(w.next_at, w.id), w.id);
    // Beside other processes, a commit that meets another's write lock throws instead of failing
    // a check: it is tried again after the back-off every commit uses (core/lock_backoff.ts);
    // thrown straight out, it answered an unexplained 503 (test writer T24).
    if ((await whileLocked(() => op.commit())).ok) return true;
    await new Promise((r) => setTimeout(r, Math.random() * 5 * attempt));
  }
  throw new TooMuchContention(w.account_id);
}

export async function listWatches(kv: Deno.Kv, accountId: string): Promise<Watch[]> {
  const ids: string[] = [];
  for await (const e of kv.list({ prefix: KV.watchesOf(accountId) })) ids.push(e.key[2] as string);
  const out: Watch[] = [];
  for (let i = 0; i < ids.length; i += 10) {
    const got = await kv.getMany<Watch[]>(ids.slice(i, i + 10).map((id) => KV.watch(id)));
    for (const e of got) if (e.value) out.push(e.value);
  }
  return out.sort((a, b) => a.created_at - b.created_at || a.id.localeCompare(b.id));
}

/** Deletes the account's watch; false when it has no such watch. */
export function deleteWatch(kv: Deno.Kv, accountId: string, id: string): Promise<boolean> {
  return accountTurns.run(accountId, () => deleteInTurn(kv, accountId, id));
}

async function deleteInTurn(kv: Deno.Kv, accountId: string, id: string): Promise<boolean> {
  for (let attempt = 0; attempt < 50; attempt++) {
    if (attempt > 0) await new Promise((r) => setTimeout(r, Math.random() * 5 * attempt));
    const e = await kv.get<Watch>(KV.watch(id));
    // Gone on a later try: an earlier commit of this deletion landed after all (a remote store's
    // lost reply), or another instance deleted it meanwhile; either way it is gone, as asked.
    if (!e.value && attempt > 0) return true;
    if (!e.value || e.value.account_id !== accountId) return false;
    const count = await kv.get<number>(KV.watchCount(accountId));
    const r = kv.atomic().check(e).check(count)
      .set(KV.watchCount(accountId), Math.max(0, (count.value ?? 1) - 1))
      .delete(KV.watch(id))
      .delete(KV.watchOf(accountId, id))
      .delete(KV.watchDue(e.value.next_at, id));
    // Its undelivered events go with it (their outbox entries are dropped when next scanned).
    for (const p of e.value.pending ?? []) r.delete(KV.webhook(p.id));
    if ((await whileLocked(() => r.commit())).ok) return true; // waits out a lock, as creation
  }
  throw new TooMuchContention(accountId); // a 503 `busy` with Retry-After, not an unhandled error
}

/**
 * Changes a watch with a checked commit, retried on conflict. `change` returns the new record,
 * or null to leave it (e.g. the watch is no longer this caller's to change); `extra` adds writes
 * to the same commit. Returns the record written, or null.
 */
export async function updateWatch(
  kv: Deno.Kv,
  id: string,
  change: (w: Watch) => Watch | null,
  extra?: (op: Deno.AtomicOperation) => void,
): Promise<Watch | null> {
  for (let attempt = 0; attempt < 10; attempt++) {
    const e = await kv.get<Watch>(KV.watch(id));
    if (!e.value) return null;
    // The value read is this call's own copy: `change` may use it as it likes.
    const dueAt = e.value.next_at;
    const next = change(e.value);
    if (!next) return null;
    const op = kv.atomic().check(e).set(KV.watch(id), next);
    if (next.next_at !== dueAt) {
      op.delete(KV.watchDue(dueAt, id)).set(KV.watchDue(next.next_at, id), id);
    }
    extra?.(op);
    if ((await op.commit()).ok) return next;
  }
  throw new TooMuchContention(`(watch ${id})`);
}

/**
 * Where a scheduled kind of record lives: its record, the due entry of a record at a time, and
 * what that entry holds (the record's id, and what may be told before the record is read).
 */
interface Schedule<T> {
  record: (id: string) => Deno.KvKey;
  due: (record: T, at: number) => Deno.KvKey;
  value: (record: T) => string;
  idOf: (value: string) => string;
}

interface ClaimOptions<T> {
  /** Due entries read at most. */
  scan: number;
  /**
   * Before the record is read, given what its due entry holds: true leaves the entry due (e.g. its
   * account has no free slot).
   */
  skip?: (value: string) => boolean;
  /** The record read: false leaves it due. */
  want?: (record: T) => boolean;
  /** Each record as soon as it is claimed; false ends the claiming. */
  claimed: (record: T) => boolean;
  /**
   * The order in which the due entries read are tried (given in due order), when not that one;
   * all `scan` entries are then read before the first is tried.
   */
  order?: (entries: Deno.KvEntry<string>[]) => Deno.KvEntry<string>[];
}

/** Deletes a schedule entry that no record stands behind, unless it changed meanwhile. */
async function dropUnchanged(kv: Deno.Kv, entry: Deno.KvEntry<unknown>): Promise<void> {
  await kv.atomic().check(entry).delete(entry.key).commit();
}

/**
 * Claims records due at `now` from the entries `selector` lists (due time second to last in the
 * key, record id as value): each claimed record's `next_at` becomes the end of its lease (and
 * `lease` may change more), in a commit checked against the record and its due entry. The new
 * `next_at` is how the claimant later recognises the record is still its own. A due entry whose
 * record is gone or has moved on is dropped.
 */
async function claimDue<T extends { next_at: number }>(
  kv: Deno.Kv,
  schedule: Schedule<T>,
  selector: Deno.KvListSelector,
  now: number,
  leaseMs: number,
  lease: (record: T, until: number) => T,
  opts: ClaimOptions<T>,
): Promise<void> {
  const listed = kv.list<string>(selector, { limit: opts.scan });
  const entries = opts.order ? opts.order(await Array.fromAsync(listed)) : listed;
  for await (const entry of entries) {
    // An entry no version writes (a restored file's `{"x":1}`) failed every pass, for every
    // account (probe HF): it is dropped as a stale one is.
    if (typeof entry.value !== "string") {
      await dropUnchanged(kv, entry);
      continue;
    }
    if (opts.skip?.(entry.value)) continue;
    const id = schedule.idOf(entry.value);
    const e = await kv.get<T>(schedule.record(id));
    if (!e.value || e.value.next_at !== entry.key[entry.key.length - 2]) {
      await dropUnchanged(kv, entry);
      continue;
    }
    if (opts.want && !opts.want(e.value)) continue;
    const leased = lease(e.value, now + leaseMs);
    const r = await kv.atomic().check(e).check(entry)
      .delete(entry.key)
      .set(schedule.due(leased, leased.next_at), schedule.value(leased))
      .set(schedule.record(id), leased)
      .commit();
    if (r.ok && !opts.claimed(leased)) return;
  }
}

const WATCHES: Schedule<Watch> = {
  record: KV.watch,
  due: (w, at) => KV.watchDue(at, w.id),
  value: (w) => w.id,
  idOf: (value) => value,
};
/**
 * An event's due entry holds its id and its watch's ("evt_… w_…"), so that a pass can pass over
 * the events of watches whose receivers fail without reading each (webhook_delivery.ts); entries
 * written before hold the id alone.
 */
const WEBHOOKS: Schedule<Delivery> = {
  record: KV.webhook,
  due: (d, at) => KV.webhookDueOf(d.account_id, at, d.id),
  value: (d) => `${d.id} ${d.watch_id}`,
  idOf: (value) => value.split(" ")[0],
};

/** The watch an event's due entry names, or undefined for an entry written before it did. */
export function dueWatchOf(value: string): string | undefined {
  return value.split(" ")[1];
}

/**
 * Claims watches due at `now` for a refresh, in due order unless `opts.order` says otherwise,
 * reading at most `opts.scan` entries of the schedule (see claimDue); `skip` and `want` leave a
 * watch due for a later pass.
 */
export function claimDueWatches(
  kv: Deno.Kv,
  now: number,
  leaseMs: number,
  opts: ClaimOptions<Watch>,
): Promise<void> {
  const selector = { prefix: KV.watchSchedule, end: [...KV.watchSchedule, now + 1] };
  return claimDue<Watch>(kv, WATCHES, selector, now, leaseMs, (w, until) => ({
    ...w,
    next_at: until,
  }), opts);
}

export function queueDelivery(op: Deno.AtomicOperation, d: Delivery): void {
  op.set(KV.webhook(d.id), d).set(WEBHOOKS.due(d, d.next_at), WEBHOOKS.value(d));
}

/**
 * The accounts with events in the outbox, in account order from just after `after` (from the
 * start when null), each with the due time of its earliest event: one short read per account,
 * whatever its number of events.
 */
export async function* outboxAccounts(
  kv: Deno.Kv,
  after: string | null,
): AsyncGenerator<{ accountId: string; firstAt: number }> {
  const prefix = KV.webhookAccountSchedule;
  // Booleans sort after every number: [prefix, a, false] follows all of account a's entries.
  let start: Deno.KvKey | null = after === null ? null : [...prefix, after, false];
  while (true) {
    const selector = start ? { prefix, start } : { prefix };
    let next: Deno.KvEntry<string> | null = null;
    for await (const e of kv.list<string>(selector, { limit: 1 })) next = e;
    if (!next) return;
    const accountId = next.key[1] as string;
    yield { accountId, firstAt: next.key[2] as number };
    start = [...prefix, accountId, false];
  }
}

/**
 * Claims up to `limit` of one account's events due at `now`, in due order, among the first `scan`
 * due (see claimDue), those `want` takes; each claimed event counts one more attempt.
 */
export async function claimAccountDeliveries(
  kv: Deno.Kv,
  accountId: string,
  now: number,
  leaseMs: number,
  o: {
    limit: number;
    scan?: number;
    skip?: (value: string) => boolean;
    want?: (d: Delivery) => boolean;
  },
  claimed: (d: Delivery) => void,
): Promise<void> {
  if (o.limit <= 0) return;
  const selector = {
    prefix: KV.webhookDueOfAccount(accountId),
    end: [...KV.webhookDueOfAccount(accountId), now + 1],
  };
  let left = o.limit;
  await claimDue<Delivery>(kv, WEBHOOKS, selector, now, leaseMs, (d, until) => ({
    ...d,
    next_at: until,
    attempts: d.attempts + 1,
  }), {
    scan: o.scan ?? o.limit,
    skip: o.skip,
    want: o.want,
    claimed: (d) => (claimed(d), --left > 0),
  });
}

/**
 * Moves up to `limit` entries of the outbox as it was kept before it was kept by account
 * (["webhook_due", at, id]) to the account's; returns how many it found.
 */
export async function moveLegacyOutbox(kv: Deno.Kv, limit: number): Promise<number> {
  let n = 0;
  for await (const entry of kv.list<string>({ prefix: KV.webhookSchedule }, { limit })) {
    n++;
    if (typeof entry.value !== "string") {
      await dropUnchanged(kv, entry);
      continue;
    }
    const e = await kv.get<Delivery>(KV.webhook(entry.value));
    const op = kv.atomic().check(entry).delete(entry.key);
    if (e.value && e.value.next_at === entry.key[1]) {
      op.check(e).set(WEBHOOKS.due(e.value, e.value.next_at), WEBHOOKS.value(e.value));
    }
    await op.commit();
  }
  return n;
}

/**
 * Ends a claimed event's attempt in one commit with its watch: the event is done (delivered,
 * given up or dropped: `retryAt` null) or due again at `retryAt`, the watch's count of its
 * undelivered events follows, and `note` (if any) is added to the watch's notes. An event that
 * another instance claimed after this attempt's lease ran out, or that was dropped meanwhile, is
 * left as it is: only the note is added.
 */
export async function settleDelivery(
  kv: Deno.Kv,
  d: Delivery,
  retryAt: number | null,
  note: DeliveryNote | null,
): Promise<void> {
  for (let attempt = 0; attempt < 10; attempt++) {
    const [de, we] = await kv.getMany<[Delivery, Watch]>([KV.webhook(d.id), KV.watch(d.watch_id)]);
    const mine = de.value !== null && de.value.next_at === d.next_at;
    const w = we.value;
    if (!mine && !w) {
      // The watch was deleted meanwhile, its events with it: this claim's own due entry (at the
      // end of its lease) goes too, rather than waiting in the outbox until then.
      await kv.delete(KV.webhookDueOf(d.account_id, d.next_at, d.id));
      return;
    }
    if (!mine && !note) return;
    const op = kv.atomic().check(de).check(we);
    if (mine) {
      op.delete(KV.webhookDueOf(d.account_id, d.next_at, d.id));
      if (retryAt === null) op.delete(KV.webhook(d.id));
      else {
        op.set(KV.webhook(d.id), { ...d, next_at: retryAt })
          .set(WEBHOOKS.due(d, retryAt), WEBHOOKS.value(d));
      }
    }
    if (w) {
      let pending = w.pending;
      if (mine && pending) {
        pending = retryAt === null
          ? pending.filter((p) => p.id !== d.id)
          : pending.map((p) => (p.id === d.id ? { id: p.id, attempts: d.attempts } : p));
      }
      op.set(KV.watch(w.id), {
        ...w,
        pending,
        deliveries: note ? withNote(w, note) : w.deliveries,
      });
    }
    if ((await op.commit()).ok) return;
    // The watch is busy (a refresh, the account's other attempts): try again a little later.
    await new Promise((r) => setTimeout(r, Math.random() * 5 * (attempt + 1)));
  }
  throw new Error(`Cannot settle webhook ${d.id}: too many concurrent writers`);
}
