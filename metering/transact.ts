/**
 * Read-decide-commit on one account record, the only way the record changes. The commit checks
 * the versionstamp the decision was made on; a conflict re-reads and decides again. Each write
 * carries a fresh batch id (the record keeps the last few), so a commit whose answer was lost (a KV Connect client may
 * retry or drop a reply) is recognised as landed instead of being applied twice.
 */
import { KV } from "./kv_layout.ts";
import { afterLocked, LOCKED_TRIES } from "../core/lock_backoff.ts";
import type { AccountState } from "./account_state.ts";
import { randomHex } from "./api_key.ts";
import type { GroupCommit } from "./group_commit.ts";
import { turnsOf } from "../core/commit_turns.ts";

export interface Versioned {
  state: AccountState;
  versionstamp: string;
}

export interface Decision<T> {
  /**
   * The record to write, or null when nothing changes. With null, the record handed to the
   * decision must still mean what it meant: the caller may keep it as the current one.
   */
  next: AccountState | null;
  result: T;
  /** Further mutations committed atomically with the record (indexes, outbox entries). */
  extend?: (op: Deno.AtomicOperation) => void;
}

export class TooMuchContention extends Error {
  constructor(accountId: string) {
    super(`Cannot commit to account ${accountId}: too many concurrent writers`);
    this.name = "TooMuchContention";
  }
}

/**
 * The store refused to write, again and again (a full disk, a lock another program holds): not
 * contention, which fails a versionstamp check instead of throwing.
 */
export class StoreWriteFailed extends Error {
  constructor(accountId: string, cause: unknown) {
    super(
      `The store refused to write account ${accountId}: ${
        cause instanceof Error ? cause.message : String(cause)
      }`,
    );
    this.name = "StoreWriteFailed";
  }
}

const MAX_ATTEMPTS = 64;
const RECENT_BATCHES = 16;

export async function readAccount(kv: Deno.Kv, accountId: string): Promise<Versioned | null> {
  const e = await kv.get<AccountState>(KV.account(accountId));
  return e.value && e.versionstamp ? { state: e.value, versionstamp: e.versionstamp } : null;
}

/**
 * Decides on `known` (a possibly stale cached copy) or on a fresh read. A decision that writes
 * nothing is trusted only when made on a fresh read, since a stale copy may wrongly refuse.
 * With `group`, the first commit may share one atomic operation with other accounts' commits;
 * after a failed group every retry commits alone, so a contended neighbour cannot starve it.
 */
export async function transact<T>(
  kv: Deno.Kv,
  accountId: string,
  known: Versioned | null,
  decide: (state: AccountState | null) => Decision<T>,
  group?: GroupCommit,
): Promise<{ result: T; current: Versioned | null }> {
  let cur = known;
  let fresh = false;
  let stale = !known; // read before deciding
  let grouped = group !== undefined;
  let writeErrors = 0;
  let lastError: unknown;
  // The last commit that failed, whose write may have landed all the same (see recent_batches).
  let pending: { batch: string; result: T } | null = null;
  /** The failed commit's answer, if `read` shows that its write landed after all. */
  const landed = (read: Versioned | null) =>
    pending && read?.state.recent_batches?.includes(pending.batch)
      ? { result: pending.result, current: read }
      : null;
  const turns = turnsOf(kv);
  type Step = { done: { result: T; current: Versioned | null } } | { threw: boolean };
  /** One read (when needed), decision and commit. */
  const step = async (): Promise<Step> => {
    if (stale) {
      cur = await readAccount(kv, accountId);
      fresh = true;
      stale = false;
      const done = landed(cur);
      if (done) return { done };
      pending = null;
    }
    // `decide` may change the record in place, with no copy taken first: a record that was
    // decided on is committed and becomes the current one, or kept because the decision changed
    // nothing (see Decision.next), or never used again (every other path below re-reads before
    // deciding anew, and the meter drops its cached record when this throws). Nobody else sees
    // it meanwhile: the meter runs one transact per account at a time. A copy per decision cost
    // a call spread over many accounts nearly as much as serializing the record (6% of the
    // serving thread against 7%).
    const d = decide(cur ? cur.state : null);
    if (!d.next) {
      if (fresh) return { done: { result: d.result, current: cur } };
      stale = true;
      return { threw: false };
    }
    // 64 random bits: unique among the few recent ids, and a third of a UUID's bytes in a record
    // that every commit serializes.
    const batch = randomHex(8);
    d.next.recent_batches = [batch, ...(d.next.recent_batches ?? []).slice(0, RECENT_BATCHES - 1)];
    const check = { key: KV.account(accountId), versionstamp: cur?.versionstamp ?? null };
    const next = d.next;
    const write = (op: Deno.AtomicOperation) => {
      op.set(KV.account(accountId), next);
      d.extend?.(op);
    };
    let committed: Deno.KvCommitResult | Deno.KvCommitError | null = null;
    if (grouped) {
      committed = await group!.commit(check, write);
      grouped = false;
    } else {
      const op = kv.atomic().check(check);
      write(op);
      try {
        committed = await op.commit();
        writeErrors = 0;
      } catch (e) {
        committed = null; // outcome unknown: the re-read tells
        writeErrors++;
        lastError = e;
      }
    }
    if (committed?.ok) {
      return {
        done: { result: d.result, current: { state: next, versionstamp: committed.versionstamp } },
      };
    }
    // The record was changed in place for a commit that did not land (as far as is known): it
    // is read again, which also tells whether this write landed after all.
    pending = { batch, result: d.result };
    stale = true;
    return { threw: committed === null };
  };
  for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
    // After two conflicts, the read and the commit take one turn among the processes sharing
    // the file (core/commit_turns.ts): read outside it, the record was stale by the time the
    // commit's turn came whenever other processes kept writing it.
    const out = attempt >= 2 && turns ? await turns.hold(step) : await step();
    if ("done" in out) return out.done;
    // Commits that threw in a row before the store is taken to refuse writes (lock_backoff.ts):
    // eight within a few milliseconds, while two or three processes on one file took turns with
    // the lock, dropped refunds (customers paid for failed calls) and answered healthy calls 503.
    if (writeErrors >= LOCKED_TRIES) {
      // Whether the last write landed is known only from a read.
      const done = landed(await readAccount(kv, accountId));
      if (done) return done;
      throw new StoreWriteFailed(accountId, lastError);
    }
    if (out.threw) {
      await afterLocked(writeErrors);
    } else if (attempt >= 4 && pending) {
      await new Promise((r) => setTimeout(r, Math.random() * 2 * attempt));
    }
  }
  throw new TooMuchContention(accountId);
}
