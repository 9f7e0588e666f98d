/**
 * Refreshes due watches. Each refresh is admitted and charged exactly like a details call of the
 * key that created the watch (rate window, plan group, credits), so a watch costs what asking
 * for the page would; a refresh that fails is refunded. While a refresh cannot be admitted (no
 * credits left, key revoked, account inactive) the watch is paused and asks again at its next
 * time. The first refresh only records the watched values; later ones compare, and a change in
 * a watched field queues a signed event in the same commit that stores the new values.
 *
 * One schedule in KV serves every instance: claims are checked commits (store.ts). A timer drives
 * it; where the platform offers Deno.cron, main.ts adds a per-minute tick that wakes it.
 *
 * A pass does not wait for the refreshes it starts: it claims due watches while slots are free
 * (at most `maxInFlight` refreshes at once, `perAccount` of one account), skipping those of an
 * account whose slots are all taken, and a finished refresh wakes the loop. So an account whose
 * refreshes are slow (its upstream turn, a hanging page) delays only its own. Due watches are
 * taken by account in turn, accounts with fewer refreshes under way first: taken in due order, a
 * one-watch account waited behind the backlog of 25 accounts with many watches, refreshed every
 * 11 s instead of every 2 (probe BJ).
 */
import { PollLoop } from "../core/poll_loop.ts";
import type { Log } from "../core/log.ts";
import type { Meter, Snapshot } from "../metering/meter.ts";
import type { DataSource } from "../upstream/data_source.ts";
import { inStockRead } from "../upstream/envelopes.ts";
import { ApiError } from "../core/api_error.ts";
import { DETAILS_ENDPOINT } from "../schemas/endpoints.ts";
import { checkedAnswer } from "../upstream/checked_answer.ts";
import type { ProductPage } from "../schemas/pages.ts";
import type { WatchedValues, WatchEvent, WatchField } from "../schemas/watches.ts";
import {
  claimDueWatches,
  type Delivery,
  MAX_PENDING_EVENTS,
  type PendingEvent,
  queueDelivery,
  updateWatch,
  type Watch,
  withNote,
} from "./store.ts";
import { randomHex } from "../metering/api_key.ts";
import { KV } from "../metering/kv_layout.ts";
import { hold, release } from "../metering/credits_in_flight.ts";
import { setBounded } from "../core/bounded_map.ts";
import { InFlight } from "./in_flight.ts";

export interface SchedulerTiming {
  pollMs: number;
  /** How long a claimed refresh is this instance's; longer than any details call can take. */
  leaseMs: number;
  /** A refresh refused for the key's rate window tries again this soon. */
  rateRetryMs: number;
  /** Refreshes under way at once on this instance. */
  maxInFlight: number;
  /** Refreshes of one account under way at once on this instance. */
  perAccount: number;
}

/** Due entries of the schedule one pass reads at most (an account has at most 100 watches). */
const SCAN = 1_000;
/** Watch id → account id, so that a pass skips a busy account's watches without reading them. */
const MAX_OWNERS = 20_000;

export const DEFAULT_SCHEDULER_TIMING: SchedulerTiming = {
  pollMs: 5_000,
  leaseMs: 120_000,
  rateRetryMs: 2_000,
  maxInFlight: 20,
  perAccount: 4,
};

export interface SchedulerDeps {
  kv: Deno.Kv;
  meter: Meter;
  dataSource: DataSource;
  log: Log;
  /** Aborted at the end of a drain: refreshes still waiting upstream give up, refunded. */
  stopping: AbortSignal;
  /** Told when a refresh queued an event. */
  onEvent: () => void;
  /**
   * Told the credits of a refresh that keeps its charge, for `shelf_credits_charged_total`: the
   * calls' route counted them, a refresh did not, so /metrics read below the usage figures.
   */
  onCharged?: (credits: number) => void;
  /**
   * WATCH_MIN_SECONDS as set now: a watch made under a lower minimum refreshes no more often than
   * this (raising it left existing watches refreshing, and charged, at their old pace).
   */
  minSeconds?: number;
}

export class WatchScheduler extends PollLoop {
  readonly #d: SchedulerDeps;
  readonly timing: SchedulerTiming;
  readonly #inFlight: InFlight;
  readonly #owners = new Map<string, string>();
  /** When this process last started a refresh of each account (the oldest forgotten first). */
  readonly #lastStarted = new Map<string, number>();

  constructor(deps: SchedulerDeps, timing: Partial<SchedulerTiming> = {}) {
    const t = { ...DEFAULT_SCHEDULER_TIMING, ...timing };
    super("watch refresh", t.pollMs, deps.log);
    this.#d = deps;
    this.timing = t;
    this.#inFlight = new InFlight(t.maxInFlight, t.perAccount);
  }

  /** Ends the loop, then waits for the refreshes it started. */
  override async stop(): Promise<void> {
    await super.stop();
    await this.#inFlight.idle();
  }

  /**
   * One pass: claims due watches while slots are free and starts their refreshes; true when it
   * started some and slots are left, since more may then be due.
   */
  protected async pass(): Promise<boolean> {
    const slots = this.#inFlight;
    // Stopping: a refresh cut by the stop is due again at once, and claimed again here it looped,
    // charged and refunded, where a process ran on with the signal aborted (probe EK).
    if (slots.full() || this.#d.stopping.aborted) return false;
    let started = 0;
    await claimDueWatches(this.#d.kv, Date.now(), this.timing.leaseMs, {
      scan: SCAN,
      skip: (id) => {
        const owner = this.#owners.get(id);
        return owner !== undefined && slots.free(owner) === 0;
      },
      want: (w) => {
        setBounded(this.#owners, w.id, w.account_id, MAX_OWNERS);
        return slots.free(w.account_id) > 0;
      },
      order: (entries) => this.#inTurn(entries),
      claimed: (w) => {
        started++;
        setBounded(this.#lastStarted, w.account_id, Date.now(), MAX_OWNERS);
        slots.run(
          w.account_id,
          () => this.#refresh(w).catch((e) => this.log.error(`refresh of watch ${w.id} failed`, e)),
          () => this.wake(),
        );
        return !slots.full();
      },
    });
    return started > 0 && !slots.full();
  }

  /**
   * Due entries (in due order) one of each account in turn: accounts with fewer refreshes under
   * way first, then those whose last refresh started longest ago; a watch whose account this
   * process has not seen yet counts as its own.
   */
  #inTurn(entries: Deno.KvEntry<string>[]): Deno.KvEntry<string>[] {
    const byAccount = new Map<string, Deno.KvEntry<string>[]>();
    for (const e of entries) {
      const owner = this.#owners.get(e.value) ?? `watch:${e.value}`;
      const queue = byAccount.get(owner);
      if (queue) queue.push(e);
      else byAccount.set(owner, [e]);
    }
    const slots = this.#inFlight;
    const last = (owner: string) => this.#lastStarted.get(owner) ?? 0;
    const queues = [...byAccount]
      .sort(([a], [b]) => slots.held(a) - slots.held(b) || last(a) - last(b))
      .map(([, q]) => q);
    const ordered: Deno.KvEntry<string>[] = [];
    for (let i = 0; ordered.length < entries.length; i++) {
      for (const q of queues) if (i < q.length) ordered.push(q[i]);
    }
    return ordered;
  }

  async #refresh(w: Watch): Promise<void> {
    const { meter } = this.#d;
    const details = DETAILS_ENDPOINT;
    const admitted = await meter.call(w.account_id, w.key_id, {
      group: details.group,
      cost: details.cost,
      valid: true,
      endpoint: details.path,
    });
    const every = Math.max(w.every_seconds, this.#d.minSeconds ?? 0) * 1000;
    if (admitted.outcome !== "admitted") {
      const rate = admitted.outcome === "rate_limited";
      // A key kept at its rate (one free call a second is enough) deferred its account's watches
      // by 2 s each time, uncharged and without end: each deferral now waits twice as long as
      // the one before, up to the watch's own interval.
      const deferrals = rate ? (w.rate_deferrals ?? 0) + 1 : 0;
      const wait = rate ? Math.min(every, this.timing.rateRetryMs * 2 ** (deferrals - 1)) : every;
      await this.#finish(w, (c) => ({
        ...c,
        status: rate ? c.status : "paused",
        paused_reason: rate ? c.paused_reason : PAUSED[admitted.outcome] ?? admitted.outcome,
        rate_deferrals: deferrals,
        next_at: Date.now() + wait,
      }));
      return;
    }
    // Held while the refresh runs, as a call's credits are: a stop names what is still held
    // (probe CH: a refresh whose result met a held store stayed charged, unnamed).
    let holding = admitted.charged;
    hold(w.account_id, holding);
    const letGo = () => {
      release(w.account_id, holding);
      holding = 0;
    };
    try {
      await this.#refreshAdmitted(w, admitted.snapshot!, admitted.charged, every, letGo);
    } finally {
      letGo();
    }
  }

  /** The refresh of a watch whose credits are charged; `letGo` ends their hold. */
  async #refreshAdmitted(
    w: Watch,
    snapshot: Snapshot,
    charged: number,
    every: number,
    letGo: () => void,
  ): Promise<void> {
    const details = DETAILS_ENDPOINT;
    let page: ProductPage;
    try {
      const params: Record<string, unknown> = { asin: w.asin, marketplace: w.marketplace };
      if (w.zip) params.zip = w.zip;
      const answer = await this.#d.dataSource.fetch({
        endpoint: details,
        params,
        signal: this.#d.stopping,
        // Upstream slots are shared out per account: a watch's refresh waits its account's turn.
        owner: w.account_id,
        chargePage: () => Promise.resolve(false),
      });
      page = checkedAnswer(details, answer, (m, e) => this.#d.log.error(m, e)).value as ProductPage;
      // A page of another product (a merged listing redirects): its price and ranks are not the
      // watched product's. Taken as read, a signed, charged event told the receiver the watched
      // ASIN's price had moved to the other product's (probe DV). The note does not name the
      // product shown: the refresh is refunded, and naming it made a watch a free ASIN lookup,
      // where a details call pays for that answer (probe FQ).
      if (page.asin !== w.asin) {
        throw new ApiError(
          502,
          "upstream_error",
          `The marketplace shows another product at ASIN ${w.asin} (a merged listing); the watch records nothing of it.`,
        );
      }
    } catch (e) {
      letGo();
      await this.#refund(w, snapshot, charged);
      // Cut by a stop, the refresh is due again at once, for the next process: it waited a whole
      // interval (up to 30 days) where a kill -9 had it retried within the claim's 2 minutes
      // (probe EJ). Any other failure waits for the next interval.
      // An ApiError is the page's or the store's answer, not the stop's (probe EK).
      const stopped = this.#d.stopping.aborted && !(e instanceof ApiError);
      const message = stopped
        ? "interrupted: the server stopped; refreshed again when it runs"
        : e instanceof ApiError
        ? `${e.code}: ${e.message}`
        : "the refresh failed";
      await this.#finish(w, (c) => ({
        ...c,
        status: "active",
        paused_reason: null,
        last_error: message,
        rate_deferrals: 0,
        next_at: stopped ? Date.now() : Date.now() + every,
      }));
      return;
    }
    const now = Date.now();
    const read = watchedValues(page);
    // Decided inside the commit's retry loop, on the record as it then is.
    const queued: { event: Delivery | null; dropped: PendingEvent[] } = {
      event: null,
      dropped: [],
    };
    const recorded = this.#finish(w, (c) => {
      const after = seenSince(c.last, read);
      const changed = c.last ? changedFields(c.last, after, c.on) : [];
      queued.event = changed.length ? newEvent(c, c.last!, after, changed, now) : null;
      queued.dropped = [];
      let { pending = [], deliveries } = c;
      if (queued.event) {
        // At most MAX_PENDING_EVENTS undelivered events per watch: the oldest make room.
        pending = [...pending, { id: queued.event.id, attempts: 0 }];
        queued.dropped = pending.slice(0, Math.max(0, pending.length - MAX_PENDING_EVENTS));
        pending = pending.slice(queued.dropped.length);
        for (const p of queued.dropped) {
          deliveries = withNote({ ...c, deliveries }, {
            event_id: p.id,
            at: new Date(now).toISOString(),
            attempt: p.attempts + 1,
            result: `dropped: ${MAX_PENDING_EVENTS} newer events of this watch were waiting`,
            delivered: false,
          });
        }
      }
      return {
        ...c,
        status: "active",
        paused_reason: null,
        last: after,
        last_refresh_at: now,
        refreshes: c.refreshes + 1,
        last_error: null,
        rate_deferrals: 0,
        next_at: now + every,
        pending,
        deliveries,
      };
    }, (op) => {
      if (queued.event) queueDelivery(op, queued.event);
      // Its outbox entry, wherever the event's next attempt is, is dropped when next scanned.
      for (const p of queued.dropped) op.delete(KV.webhook(p.id));
    });
    let written: Watch | null;
    try {
      written = await recorded;
    } catch (e) {
      // The store would not take the result: the refresh did not happen as far as the watch
      // knows, so it is not paid for either; the lease brings it back.
      letGo();
      await this.#refund(w, snapshot, charged);
      throw e;
    }
    this.#d.onCharged?.(charged);
    // A watch deleted while its page was fetched stays charged for it, as a call whose client
    // hung up does (routes/data.ts): refunding made the fetch free, one new watch after another.
    if (written && queued.event) this.#d.onEvent();
  }

  /** Gives back a refresh's credits, to the period and day its charge (`charged`) took them in. */
  async #refund(w: Watch, charged: Snapshot, amount: number): Promise<void> {
    const tag = { keyId: w.key_id, endpoint: DETAILS_ENDPOINT.path };
    await this.#d.meter.refundSurely(
      w.account_id,
      charged.periodStart,
      amount,
      tag,
      (m, e) => this.log.error(m, e),
      charged.at,
    );
  }

  /**
   * Writes the refresh's outcome, unless the watch was deleted or re-claimed meanwhile; null
   * then.
   */
  #finish(
    claimed: Watch,
    change: (w: Watch) => Watch,
    extra?: (op: Deno.AtomicOperation) => void,
  ): Promise<Watch | null> {
    return updateWatch(
      this.#d.kv,
      claimed.id,
      (w) => (w.next_at === claimed.next_at ? change(w) : null),
      extra,
    );
  }
}

const PAUSED: Record<string, string> = {
  quota_exhausted: "no credits left in this period",
  unauthorized: "the key that created the watch is revoked",
  forbidden: "the account is inactive or its plan lacks the products group",
};

/**
 * The watched values of a details answer. An in_stock the answer lists in `missing` (the page
 * showed nothing of its stock) is only a default: it is null, and a watch keeps the one it last
 * read instead (seenSince). Taken as read, it sent a paid in_stock event each time such a page
 * came and went (probe CA).
 */
export function watchedValues(page: ProductPage & { missing?: string[] }): WatchedValues {
  const p = page.price;
  return {
    price: p ? { amount: p.amount, display: p.display, currency: p.currency } : null,
    in_stock: inStockRead(page),
    rank: page.bestsellers_rank ?? [],
  };
}

/** What a refresh saw, with an in_stock it could not read kept as last read. */
export function seenSince(
  before: WatchedValues | null | undefined,
  read: WatchedValues,
): WatchedValues {
  return before && read.in_stock === null ? { ...read, in_stock: before.in_stock } : read;
}

const FIELD_OF: Record<WatchField, (v: WatchedValues) => unknown> = {
  price: (v) => v.price && [v.price.amount, v.price.currency],
  in_stock: (v) => v.in_stock,
  rank: (v) => v.rank.map((r) => [r.rank, r.category]),
};

/** The watched fields whose values differ (a price's display text alone is no change). */
export function changedFields(
  before: WatchedValues,
  after: WatchedValues,
  on: WatchField[],
): WatchField[] {
  return on.filter((f) =>
    // Stock first read (null before) is no change: nothing was known to change from.
    !(f === "in_stock" && (before.in_stock === null || after.in_stock === null)) &&
    JSON.stringify(FIELD_OF[f](before)) !== JSON.stringify(FIELD_OF[f](after))
  );
}

function newEvent(
  w: Watch,
  before: WatchedValues,
  after: WatchedValues,
  changed: WatchField[],
  now: number,
): Delivery {
  const id = `evt_${randomHex(12)}`;
  const event: WatchEvent = {
    event_id: id,
    watch_id: w.id,
    asin: w.asin,
    marketplace: w.marketplace,
    observed_at: new Date(now).toISOString(),
    changed,
    before,
    after,
  };
  return {
    id,
    watch_id: w.id,
    account_id: w.account_id,
    body: JSON.stringify(event),
    created_at: now,
    attempts: 0,
    next_at: now,
  };
}
