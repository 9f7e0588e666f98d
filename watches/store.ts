/**
 * Watches and their webhook events in KV (keys in metering/kv_layout.ts). Each watch has one
 * schedule entry at its `next_at`; an instance claims a due refresh by moving that entry to the
 * end of a lease in a commit checked against both the record and the entry, so of two instances
 * scanning the same schedule only one wins, and a refresh whose instance died is claimed again
 * once its lease ends. Events wait in an outbox claimed the same way.
 */
import { KV } from "../metering/kv_layout.ts";
import type { DeliveryNote, WatchedValues, WatchField } from "../schemas/watches.ts";
import { randomHex } from "../metering/api_key.ts";
import { newWatchSecret } from "./signature.ts";

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
  last: WatchedValues | null;
  last_refresh_at: number | null;
  refreshes: number;
  last_error: string | null;
  deliveries: DeliveryNote[];
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
  };
}

/** Delivery attempts kept on a watch for the API and the dashboard. */
export const DELIVERY_NOTES = 20;

/** Creates `w` unless its account already holds `max` watches; false then. */
export async function createWatch(kv: Deno.Kv, w: Watch, max: number): Promise<boolean> {
  for (let attempt = 0; attempt < 50; attempt++) {
    const count = await kv.get<number>(KV.watchCount(w.account_id));
    const n = count.value ?? 0;
    if (n >= max) return false;
    const r = await kv.atomic()
      .check(count)
      .check({ key: KV.watch(w.id), versionstamp: null })
      .set(KV.watchCount(w.account_id), n + 1)
      .set(KV.watch(w.id), w)
      .set(KV.watchOf(w.account_id, w.id), true)
      .set(KV.watchDue(w.next_at, w.id), w.id)
      .commit();
    if (r.ok) return true;
    await new Promise((r) => setTimeout(r, Math.random() * 5 * attempt));
  }
  throw new Error(`Cannot create a watch for ${w.account_id}: too many concurrent writers`);
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
export async function deleteWatch(kv: Deno.Kv, accountId: string, id: string): Promise<boolean> {
  for (let attempt = 0; attempt < 50; attempt++) {
    const e = await kv.get<Watch>(KV.watch(id));
    if (!e.value || e.value.account_id !== accountId) return false;
    const count = await kv.get<number>(KV.watchCount(accountId));
    const r = await kv.atomic().check(e).check(count)
      .set(KV.watchCount(accountId), Math.max(0, (count.value ?? 1) - 1))
      .delete(KV.watch(id))
      .delete(KV.watchOf(accountId, id))
      .delete(KV.watchDue(e.value.next_at, id))
      .commit();
    if (r.ok) return true;
  }
  throw new Error(`Cannot delete watch ${id}: too many concurrent writers`);
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
  throw new Error(`Cannot update watch ${id}: too many concurrent writers`);
}

/** Where a scheduled kind of record lives: its record, its due entries, and their prefix. */
interface Schedule {
  record: (id: string) => Deno.KvKey;
  due: (at: number, id: string) => Deno.KvKey;
  prefix: Deno.KvKey;
}

/**
 * Claims up to `limit` records due at `now` from `schedule`: each claimed record's `next_at`
 * becomes the end of its lease (and `lease` may change more), in a commit checked against the
 * record and its due entry. The new `next_at` is how the claimant later recognises the record is
 * still its own. A due entry whose record is gone or has moved on is dropped.
 */
async function claimDue<T extends { next_at: number }>(
  kv: Deno.Kv,
  schedule: Schedule,
  now: number,
  leaseMs: number,
  limit: number,
  lease: (record: T, until: number) => T,
): Promise<T[]> {
  const claimed: T[] = [];
  const due = kv.list<string>(
    { prefix: schedule.prefix, end: [...schedule.prefix, now + 1] },
    { limit },
  );
  for await (const entry of due) {
    const id = entry.value;
    const e = await kv.get<T>(schedule.record(id));
    if (!e.value || e.value.next_at !== entry.key[1]) {
      await kv.atomic().check(entry).delete(entry.key).commit();
      continue;
    }
    const leased = lease(e.value, now + leaseMs);
    const r = await kv.atomic().check(e).check(entry)
      .delete(entry.key)
      .set(schedule.due(leased.next_at, id), id)
      .set(schedule.record(id), leased)
      .commit();
    if (r.ok) claimed.push(leased);
  }
  return claimed;
}

const WATCHES: Schedule = { record: KV.watch, due: KV.watchDue, prefix: KV.watchSchedule };
const WEBHOOKS: Schedule = { record: KV.webhook, due: KV.webhookDue, prefix: KV.webhookSchedule };

/** Claims up to `limit` watches due at `now` for a refresh (see claimDue). */
export function claimDueWatches(
  kv: Deno.Kv,
  now: number,
  leaseMs: number,
  limit: number,
): Promise<Watch[]> {
  return claimDue<Watch>(kv, WATCHES, now, leaseMs, limit, (w, until) => ({
    ...w,
    next_at: until,
  }));
}

export function queueDelivery(op: Deno.AtomicOperation, d: Delivery): void {
  op.set(KV.webhook(d.id), d).set(KV.webhookDue(d.next_at, d.id), d.id);
}

/** Claims due events like claimDueWatches; each claimed event counts one more attempt. */
export function claimDueDeliveries(
  kv: Deno.Kv,
  now: number,
  leaseMs: number,
  limit: number,
): Promise<Delivery[]> {
  return claimDue<Delivery>(kv, WEBHOOKS, now, leaseMs, limit, (d, until) => ({
    ...d,
    next_at: until,
    attempts: d.attempts + 1,
  }));
}

/** Ends a claimed event's attempt: done (delivered or given up), or due again at `retryAt`. */
export async function settleDelivery(
  kv: Deno.Kv,
  d: Delivery,
  retryAt: number | null,
): Promise<void> {
  const e = await kv.get<Delivery>(KV.webhook(d.id));
  // Another instance claimed it after this attempt's lease ran out: its result stands.
  if (!e.value || e.value.next_at !== d.next_at) return;
  const op = kv.atomic().check(e).delete(KV.webhookDue(d.next_at, d.id));
  if (retryAt === null) op.delete(KV.webhook(d.id));
  else {
    op.set(KV.webhook(d.id), { ...d, next_at: retryAt })
      .set(KV.webhookDue(retryAt, d.id), d.id);
  }
  await op.commit();
}
