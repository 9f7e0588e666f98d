/**
 * Group commit across accounts (issue 15.3). Spread over many accounts, each call is the only
 * one in its account's batch, so every call paid a store commit of its own, and the store's
 * fixed cost per commit, not the work of the calls, capped throughput at about a fifth of one
 * hot account's. Here commits of different accounts that arrive while earlier groups are being
 * written wait and then go to the store together as one atomic operation, with one versionstamp
 * check per account (at most MAX_CHECKS, the limit every KV target honours). The store writes
 * commits one after another anyway, so the wait costs a call no more than the queue it replaces.
 *
 * An atomic operation lands whole or not at all, and a failed check does not say whose it was:
 * every member of a failed group is told "not committed" and re-reads its own record, exactly
 * as after a failed commit of its own (transact.ts), and retries alone, so one contended
 * account delays its group by one round trip, never by more.
 */

/** Deno Deploy's KV, denokv and the local file all accept ten checks in one atomic operation. */
const MAX_CHECKS = 10;
/** Groups being written at once before a partial group waits for one of them to finish. */
const IN_FLIGHT = 2;

interface Member {
  check: Deno.AtomicCheck;
  write: (op: Deno.AtomicOperation) => void;
  resolve: (r: Deno.KvCommitResult | null) => void;
}

export class GroupCommit {
  readonly #kv: Deno.Kv;
  #waiting: Member[] = [];
  #inFlight = 0;

  constructor(kv: Deno.Kv) {
    this.#kv = kv;
  }

  /**
   * Commits `write` under `check`, together with other accounts' commits that are waiting.
   * Resolves to the commit result, or null when the group did not land or its outcome is
   * unknown (the caller re-reads its record to tell).
   */
  commit(
    check: Deno.AtomicCheck,
    write: (op: Deno.AtomicOperation) => void,
  ): Promise<Deno.KvCommitResult | null> {
    return new Promise((resolve) => {
      this.#waiting.push({ check, write, resolve });
      this.#pump();
    });
  }

  /**
   * A full group goes at once; a partial one waits while IN_FLIGHT groups are being written, so
   * a remote store's round trip (KV Connect, Deploy) never caps the commits in flight.
   */
  #pump(): void {
    while (
      this.#waiting.length >= MAX_CHECKS || (this.#waiting.length && this.#inFlight < IN_FLIGHT)
    ) this.#send(this.#take());
  }

  /** Up to MAX_CHECKS members in arrival order; a record is checked at most once per group. */
  #take(): Member[] {
    const group: Member[] = [];
    const rest: Member[] = [];
    for (const m of this.#waiting) {
      if (group.length < MAX_CHECKS && !group.some((g) => sameKey(g.check.key, m.check.key))) {
        group.push(m);
      } else rest.push(m);
    }
    this.#waiting = rest;
    return group;
  }

  #send(group: Member[]): void {
    this.#inFlight++;
    const done = (r: Deno.KvCommitResult | null) => {
      this.#inFlight--;
      group.forEach((m) => m.resolve(r));
      this.#pump();
    };
    try {
      const op = this.#kv.atomic();
      for (const m of group) {
        op.check(m.check);
        m.write(op);
      }
      op.commit().then((r) => done(r.ok ? r : null), () => done(null));
    } catch {
      done(null);
    }
  }
}

function sameKey(a: Deno.KvKey, b: Deno.KvKey): boolean {
  return a.length === b.length && a.every((part, i) => part === b[i]);
}
