/**
 * Admission and charging of calls. Calls of one account queue up, and each round of the queue
 * is decided and committed as one batch: one atomic commit, checked against the versionstamp of
 * the account record, admits, rate-counts and charges many concurrent calls. The record is kept
 * in memory between rounds; a stale copy only costs a failed check and a re-read, so revocations
 * and plan changes made elsewhere are seen by the very next call. The same commit counts the
 * credits of the day and writes the usage alerts (80%, 100%) that the batch's charges crossed.
 */
import type { Clock } from "./clock.ts";
import type { Plan, Plans } from "./plans.ts";
import type { Group } from "../schemas/endpoints.ts";
import {
  type AccountState,
  countUsage,
  newlyCrossed,
  PERIOD_MS,
  remaining,
  rollPeriod,
  type UsageRecord,
  usageRecord,
  type UsageTag,
} from "./account_state.ts";
import { type Decision, transact, type Versioned } from "./transact.ts";
import { type Alert, newAlert, writeAlert } from "./alerts.ts";
import { setImmediate } from "node:timers";
import { GroupCommit } from "./group_commit.ts";
import { setBounded } from "../core/bounded_map.ts";

export type Refusal = "unauthorized" | "forbidden" | "rate_limited" | "invalid" | "quota_exhausted";

/** What the response headers need to know after a decision. */
export interface Snapshot {
  remaining: number;
  periodStart: number;
  periodEnd: number;
  rateLimit: number;
  windowRemaining: number;
  /** When the decision was made (to the second): a refund counts on the day its charge did. */
  at: number;
}

export interface CallResult {
  outcome: "admitted" | Refusal;
  charged: number;
  snapshot: Snapshot | null;
}

export interface UsageResult {
  outcome: "ok" | "unauthorized" | "forbidden";
  usage: UsageRecord | null;
  snapshot: Snapshot | null;
}

type Op =
  | {
    kind: "call";
    keyId: string;
    group: Group | null;
    cost: number;
    valid: boolean;
    endpoint?: string;
  }
  | { kind: "usage"; keyId: string }
  | { kind: "charge"; cost: number; tag?: UsageTag; group?: Group | null }
  | { kind: "refund"; periodStart: number; amount: number; tag?: UsageTag; at?: number };

/** What a refund did: `applied` false when its period had ended; the account as it then was. */
export interface RefundResult {
  applied: boolean;
  snapshot: Snapshot;
}

type Result =
  | CallResult
  | UsageResult
  | { ok: boolean; snapshot: Snapshot | null }
  | RefundResult
  | null;

interface Pending {
  op: Op;
  resolve: (r: Result) => void;
  reject: (e: unknown) => void;
}

/** How a stop names a refund that has not landed (one phrase, for an operator to search). */
const NOT_APPLIED = "not applied before the stop";
// A write cut by the exit may or may not have reached the store (a remote store may yet apply it),
// so the operator checks before giving it back; "it may land yet" read as a promise (probe DB).
const UNDER_WAY =
  " (a write of it was still under way at the stop: it may have landed; check the account's usage before giving it back)";

/** A refund the store would not take, tried again in the background (Meter.refundSurely). */
interface DeferredRefund {
  apply: () => Promise<unknown>;
  /** "refund of N credit(s) to acc_… (period …, key …)", for the log. */
  what: string;
  log: (message: string, e?: unknown) => void;
  timer?: ReturnType<typeof setTimeout>;
  /** The try under way, if any: a second one waits for it instead of applying again. */
  trying: Promise<boolean> | null;
  /** Landed, given up or settled at a stop: tried no more. */
  done: boolean;
  lastError?: unknown;
}

const MAX_BATCH = 512;
/** Account records kept between rounds; past this many the least recently used is dropped. */
const MAX_CACHED_ACCOUNTS = 20_000;
/** A free call (usage) refreshes last-used only when it is older than this, to spare a write. */
const LAST_USED_GRANULARITY_MS = 60_000;
/** How long a refund the store would not take is tried again, and how many may wait at once. */
const REFUND_RETRY_MS = 60 * 60_000;
const MAX_DEFERRED_REFUNDS = 100_000;

export class Meter {
  readonly #kv: Deno.Kv;
  readonly #plans: Plans;
  readonly #clock: Clock;
  readonly #cache = new Map<string, Versioned>();
  readonly #queues = new Map<string, Pending[]>();
  readonly #group: GroupCommit;
  readonly #deferred = new Set<DeferredRefund>();
  /** Refunds on their first try (it may be backing off a locked store), for settleRefunds. */
  readonly #firstTries = new Set<
    { what: () => string; log: (message: string) => void; done: Promise<unknown> }
  >();
  /** Told after a commit that wrote usage alerts, so a delivery loop can send them at once. */
  onAlert: (alerts: Alert[]) => void = () => {};

  constructor(kv: Deno.Kv, plans: Plans, clock: Clock) {
    this.#kv = kv;
    this.#plans = plans;
    this.#clock = clock;
    this.#group = new GroupCommit(kv);
  }

  /**
   * Admits (rate window), then charges `cost` credits; `valid: false` takes a rate slot but no
   * credit. `endpoint` names the call in the per-endpoint tally.
   */
  call(
    accountId: string,
    keyId: string,
    opts: { group: Group | null; cost: number; valid: boolean; endpoint?: string },
  ): Promise<CallResult> {
    return this.#submit(accountId, { kind: "call", keyId, ...opts }) as Promise<CallResult>;
  }

  /** The usage record, for a free call that is neither rate-counted nor charged. */
  usage(accountId: string, keyId: string): Promise<UsageResult> {
    return this.#submit(accountId, { kind: "usage", keyId }) as Promise<UsageResult>;
  }

  /**
   * Charges more credits to an admitted call (a further upstream page); false when too few are
   * left, or when the call would no longer be admitted: its key (`tag`) revoked, its account
   * inactive, or its plan without the endpoint's `group`.
   */
  charge(
    accountId: string,
    cost: number,
    tag?: UsageTag,
    group?: Group | null,
  ): Promise<{ ok: boolean; snapshot: Snapshot | null }> {
    return this.#submit(accountId, { kind: "charge", cost, tag, group }) as Promise<
      { ok: boolean; snapshot: Snapshot | null }
    >;
  }

  /**
   * Gives back credits of a failed call, unless its period has ended meanwhile; `at`, when the
   * credits were charged, names the day they are taken off in the daily tally.
   */
  async refund(
    accountId: string,
    periodStart: number,
    amount: number,
    tag?: UsageTag,
    at?: number,
  ): Promise<RefundResult | null> {
    if (amount <= 0) return null;
    return await this.#submit(accountId, { kind: "refund", periodStart, amount, tag, at }) as
      | RefundResult
      | null;
  }

  /**
   * refund(), and when the store will not take it now (it refused writes for seconds), again in
   * the background: after 1 s, doubling up to 5 minutes, for up to REFUND_RETRY_MS, and once more
   * at a stop (settleRefunds). A failed call was answered as free, so its refund must land once
   * the store takes writes again; only a process killed first loses it. `log` hears of each refund
   * put off and of one given up, with what it would have given back. What the refund did when the
   * store took it now (whether or not its period had ended); null when it was put off.
   */
  async refundSurely(
    accountId: string,
    periodStart: number,
    amount: number,
    tag: UsageTag | undefined,
    log: (message: string, e?: unknown) => void,
    at?: number,
  ): Promise<RefundResult | null> {
    const apply = () => this.refund(accountId, periodStart, amount, tag, at);
    const describe = () =>
      `refund of ${amount} credit(s) to ${accountId} (period ${
        new Date(periodStart).toISOString()
      }${tag ? `, key ${tag.keyId}` : ""})`;
    const first = { what: describe, log, done: apply() };
    this.#firstTries.add(first);
    try {
      return await first.done;
    } catch (e) {
      const what = describe();
      if (this.#deferred.size >= MAX_DEFERRED_REFUNDS) {
        log(`${what} failed, and too many wait: not applied`, e);
        return null;
      }
      log(`${what} failed; it is tried again`, e);
      const started = Date.now();
      const entry: DeferredRefund = { apply, what, log, trying: null, done: false };
      this.#deferred.add(entry);
      const retry = (delayMs: number) => {
        entry.timer = setTimeout(async () => {
          const landed = await this.#tryDeferred(entry);
          if (landed || entry.done) return;
          if (Date.now() - started + delayMs > REFUND_RETRY_MS) {
            entry.done = true;
            this.#deferred.delete(entry);
            log(`${what} given up: not applied`, entry.lastError);
          } else retry(Math.min(delayMs * 2, 300_000));
        }, delayMs);
      };
      retry(1_000);
      return null;
    } finally {
      this.#firstTries.delete(first);
    }
  }

  /**
   * One try of a put-off refund, never two at once: a stop's try and the background one both
   * landing gave a refund twice. True when it has landed (now or by the try under way).
   */
  async #tryDeferred(entry: DeferredRefund): Promise<boolean> {
    if (entry.done) return true;
    entry.trying ??= entry.apply().then(
      () => {
        entry.done = true;
        this.#deferred.delete(entry);
        return true;
      },
      (e) => {
        entry.lastError = e;
        return false;
      },
    ).finally(() => (entry.trying = null));
    return await entry.trying;
  }

  /**
   * At a stop: waits up to `waitMs` for refunds on their first try (a call cut at the end of the
   * drain is refunding, its commit perhaps backing off a store another process holds), then tries
   * every refund put off again and again within what is left of `waitMs`, and names in the log
   * each that has not landed, so that the operator can give it back by hand. A stop used to drop
   * them unsaid (probes BN, CA: 12 calls cut at a drain stayed charged, with no line). Refunds
   * begun while it settles are taken up too, and it goes on while `open()` says work that may
   * still refund is running, or until the time is out.
   */
  async settleRefunds(waitMs = 2_000, open: () => boolean = () => false): Promise<void> {
    let timer: ReturnType<typeof setTimeout> | undefined;
    let over = false;
    const out = new Promise<false>((r) =>
      timer = setTimeout(() => {
        over = true;
        r(false);
      }, waitMs)
    );
    const pause = async (ms: number) => {
      let t: ReturnType<typeof setTimeout> | undefined;
      await Promise.race([new Promise((r) => (t = setTimeout(r, ms))), out]);
      clearTimeout(t);
    };
    // Tried until the time is out, not once: a try under way when the stop came may fail just
    // before the store takes writes again (probe CB: all 16 lost, 6 s of the stop unused).
    const settle = async (entry: DeferredRefund) => {
      clearTimeout(entry.timer);
      while (!over) {
        if (await Promise.race([this.#tryDeferred(entry), out])) return;
        await pause(100);
      }
      this.#giveUp(entry);
    };
    const taken = new Set<DeferredRefund>();
    const untaken = () => [...this.#deferred].filter((e) => !taken.has(e));
    try {
      while (!over) {
        // A first try that fails now is put off (refundSurely), and so taken up just below.
        await Promise.race([Promise.allSettled([...this.#firstTries].map((f) => f.done)), out]);
        const fresh = untaken();
        if (!fresh.length && !this.#firstTries.size) {
          // While calls that hold credits are still open their refunds may begin yet (a call cut
          // late, its charge or refund waiting on a store another process holds): the settling
          // used to end here, and the stop left such calls charged, unnamed, with seconds unused
          // (probe CH).
          if (!open()) break;
          await pause(50);
          continue;
        }
        fresh.forEach((e) => taken.add(e));
        await Promise.all(fresh.map(settle));
      }
      for (const { what, log } of this.#firstTries) log(`${what()} ${NOT_APPLIED}${UNDER_WAY}`);
      untaken().forEach((e) => this.#giveUp(e));
    } finally {
      clearTimeout(timer);
    }
  }

  /** A put-off refund the stop could not land: no further try, and its line for the operator. */
  #giveUp(entry: DeferredRefund): void {
    clearTimeout(entry.timer);
    const underWay = entry.trying !== null;
    entry.done = true;
    this.#deferred.delete(entry);
    entry.log(`${entry.what} ${NOT_APPLIED}${underWay ? UNDER_WAY : ""}`, entry.lastError);
  }

  /** Drops the cached record (the admin API changed it in this process). */
  forget(accountId: string): void {
    this.#cache.delete(accountId);
  }

  #submit(accountId: string, op: Op): Promise<Result> {
    return new Promise((resolve, reject) => {
      const q = this.#queues.get(accountId);
      if (q) return void q.push({ op, resolve, reject });
      const fresh = [{ op, resolve, reject }];
      this.#queues.set(accountId, fresh);
      this.#drain(accountId, fresh);
    });
  }

  async #drain(accountId: string, q: Pending[]): Promise<void> {
    while (q.length) {
      // Each batch waits for the end of the current turn, so that the requests arriving in it
      // share one commit: started at once, a batch would often hold only the first of them.
      await new Promise((r) => setImmediate(r));
      const batch = q.splice(0, MAX_BATCH);
      try {
        const { result, current } = await transact(
          this.#kv,
          accountId,
          this.#cache.get(accountId) ?? null,
          (state) => this.#decide(state, batch.map((p) => p.op)),
          this.#group,
        );
        // Re-inserted last: the oldest entry is the least used.
        if (current) setBounded(this.#cache, accountId, current, MAX_CACHED_ACCOUNTS);
        else this.#cache.delete(accountId);
        batch.forEach((p, i) => p.resolve(result.results[i]));
        if (result.alerts.length) this.onAlert(result.alerts);
      } catch (e) {
        this.#cache.delete(accountId);
        batch.forEach((p) => p.reject(e));
      }
    }
    this.#queues.delete(accountId);
  }

  #decide(state: AccountState | null, ops: Op[]): Decision<{ results: Result[]; alerts: Alert[] }> {
    if (!state) {
      const none = ops.map((op): Result => refusedWithout(op));
      return { next: null, result: { results: none, alerts: [] } };
    }
    const now = this.#clock.now();
    const plan = this.#plans.get(state.plan);
    const periodBefore = state.period_start;
    rollPeriod(state, now);
    let changed = state.period_start !== periodBefore;
    const sec = Math.floor(now / 1000);
    const results = ops.map((op): Result => {
      const r = decideOne(state, plan, op, now, sec);
      changed ||= r.changed;
      return r.result;
    });
    const crossed = newlyCrossed(state, plan);
    changed ||= crossed.length > 0;
    const alerts = crossed.map((t) => newAlert(state, plan, t, now)).filter((a) => a !== null);
    return {
      next: changed ? state : null,
      result: { results, alerts },
      extend: alerts.length ? (op) => alerts.forEach((a) => writeAlert(op, a)) : undefined,
    };
  }
}

function refusedWithout(op: Op): Result {
  switch (op.kind) {
    case "call":
      return { outcome: "unauthorized", charged: 0, snapshot: null };
    case "usage":
      return { outcome: "unauthorized", usage: null, snapshot: null };
    case "charge":
      return { ok: false, snapshot: null };
    case "refund":
      return null;
  }
}

function decideOne(
  state: AccountState,
  plan: Plan | undefined,
  op: Op,
  now: number,
  sec: number,
): { result: Result; changed: boolean } {
  const snap = (keyId?: string) => snapshot(state, plan, keyId, sec);
  switch (op.kind) {
    case "call": {
      const key = state.keys[op.keyId];
      if (!key || key.status !== "active") {
        return { result: { outcome: "unauthorized", charged: 0, snapshot: null }, changed: false };
      }
      if (state.status !== "active" || !plan || (op.group && !plan.groups.includes(op.group))) {
        return {
          result: { outcome: "forbidden", charged: 0, snapshot: snap(op.keyId) },
          changed: false,
        };
      }
      // The window only moves forward: an instance whose clock lags counts its calls against the
      // newer second another instance opened, rather than reopening an older one (issue 13.6).
      if (sec > key.win_sec) {
        key.win_sec = sec;
        key.win_count = 0;
      }
      if (key.win_count >= plan.rate_limit_per_sec) {
        return {
          result: { outcome: "rate_limited", charged: 0, snapshot: snap(op.keyId) },
          changed: false,
        };
      }
      key.win_count++;
      if (!op.valid) {
        return {
          result: { outcome: "invalid", charged: 0, snapshot: snap(op.keyId) },
          changed: true,
        };
      }
      if (op.cost > remaining(state, plan)) {
        return {
          result: { outcome: "quota_exhausted", charged: 0, snapshot: snap(op.keyId) },
          changed: true,
        };
      }
      state.used += op.cost;
      countUsage(
        state,
        now,
        op.cost,
        op.endpoint === undefined ? undefined : { keyId: op.keyId, endpoint: op.endpoint },
      );
      key.last_used_at = now;
      return {
        result: { outcome: "admitted", charged: op.cost, snapshot: snap(op.keyId) },
        changed: true,
      };
    }
    case "usage": {
      const key = state.keys[op.keyId];
      if (!key || key.status !== "active") {
        return { result: { outcome: "unauthorized", usage: null, snapshot: null }, changed: false };
      }
      if (state.status !== "active") {
        return {
          result: { outcome: "forbidden", usage: null, snapshot: snap(op.keyId) },
          changed: false,
        };
      }
      const stale = key.last_used_at === null || now - key.last_used_at >= LAST_USED_GRANULARITY_MS;
      if (stale) key.last_used_at = now;
      return {
        result: { outcome: "ok", usage: usageRecord(state, plan), snapshot: snap(op.keyId) },
        changed: stale,
      };
    }
    case "charge": {
      // A search that runs on takes no further page once its call would be refused: a key
      // revoked 1.5 s into a limit=200 search let it fetch and charge 8 more pages (probe AJ).
      const key = op.tag ? state.keys[op.tag.keyId] : undefined;
      const refused = (op.tag && key?.status !== "active") || state.status !== "active" ||
        !plan || (op.group && !plan.groups.includes(op.group));
      // Its snapshot tells the call's key's window: without it a search's answer said the second
      // was still free, and the client's next call met a 429 (probe DC).
      if (refused || op.cost > remaining(state, plan)) {
        return { result: { ok: false, snapshot: snap(op.tag?.keyId) }, changed: false };
      }
      state.used += op.cost;
      countUsage(state, now, op.cost, op.tag);
      return { result: { ok: true, snapshot: snap(op.tag?.keyId) }, changed: true };
    }
    case "refund": {
      // Into the period the credits were taken from, or one whose usage plan changes carried
      // into this one: any from the oldest they carried on, since a rollover ends the chain;
      // never into a later period, which did not pay them.
      const carried = state.carried_from?.length ? Math.min(...state.carried_from) : Infinity;
      if (op.periodStart !== state.period_start && !(op.periodStart >= carried)) {
        return { result: { applied: false, snapshot: snap(op.tag?.keyId) }, changed: false };
      }
      state.used = Math.max(0, state.used - op.amount);
      countUsage(state, op.at ?? now, -op.amount, op.tag);
      return { result: { applied: true, snapshot: snap(op.tag?.keyId) }, changed: true };
    }
  }
}

function snapshot(
  state: AccountState,
  plan: Plan | undefined,
  keyId: string | undefined,
  sec: number,
): Snapshot {
  const key = keyId ? state.keys[keyId] : undefined;
  const limit = plan?.rate_limit_per_sec ?? 0;
  const used = key && key.win_sec >= sec ? key.win_count : 0;
  return {
    remaining: remaining(state, plan),
    periodStart: state.period_start,
    periodEnd: state.period_start + PERIOD_MS,
    rateLimit: limit,
    windowRemaining: Math.max(0, limit - used),
    at: sec * 1000,
  };
}
