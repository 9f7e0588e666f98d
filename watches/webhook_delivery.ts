/**
 * Sends watch events to their webhooks: claims due events from the KV outbox, checks the target
 * again (SSRF rules), POSTs the signed body, and on anything but a 2xx answer tries again with
 * exponential back-off until a day has passed since the event. Every attempt is noted on the
 * watch (API and dashboard). Redirects are not followed: a 3xx is a failed attempt, so a public
 * host cannot bounce the request into a private one.
 *
 * Fair between accounts: the outbox is kept by account, and a pass visits the accounts with due
 * events in turn (from where the last pass stopped), claiming for each only what its free slots
 * allow (at most `perAccount` attempts of one account at once, `maxInFlight` in all). A pass
 * starts the attempts and returns; each finished attempt wakes the loop. So a receiver that
 * hangs holds its own account's few slots for the timeout, never another account's events; and
 * an account with an attempt under way for `slowMs`, or one that failed that slowly lately, has
 * one slot and none of those kept for accounts with nothing under way (InFlight), so that many
 * accounts pointing at a receiver that hangs cannot hold every slot.
 *
 * An account that is not active (set inactive, or gone) gets no delivery: its events are dropped
 * at their attempt, unsent, with a note on the watch. Its refreshes are refused by the meter
 * meanwhile, so no new ones arise; once it is active again, its next refreshes compare with the
 * values last recorded and send the change.
 */
import { PollLoop } from "../core/poll_loop.ts";
import type { Log } from "../core/log.ts";
import { KV } from "../metering/kv_layout.ts";
import type { AccountState } from "../metering/account_state.ts";
import {
  claimAccountDeliveries,
  type Delivery,
  dueWatchOf,
  moveLegacyOutbox,
  outboxAccounts,
  settleDelivery,
  type Watch,
} from "./store.ts";
import { InFlight } from "./in_flight.ts";
import { setBounded } from "../core/bounded_map.ts";
import { signatureHeader } from "./signature.ts";
import {
  checkedLookup,
  RefusedTarget,
  type Resolve,
  webhookHost,
  webhookUrlRefusal,
} from "./webhook_target.ts";
import http from "node:http";
import https from "node:https";
import type { LookupFunction } from "node:net";

export interface WebhookTiming {
  pollMs: number;
  /** First retry delay; doubles per failed attempt up to maxDelayMs. */
  retryMs: number;
  maxDelayMs: number;
  /** After this long since the event, a failed attempt is the last. */
  giveUpMs: number;
  /** How long a claimed event is this instance's to send. */
  leaseMs: number;
  /** One attempt's limit, connection to last byte. */
  timeoutMs: number;
  /** Attempts under way at once on this instance. */
  maxInFlight: number;
  /** Attempts of one account under way at once on this instance. */
  perAccount: number;
  /**
   * An account is slow (see InFlight: one slot, none of those kept for accounts with nothing
   * under way) while one of its attempts has been under way this long, and for SLOW_FOR_MS after
   * one failed that took this long.
   */
  slowMs: number;
}

/**
 * Due events of a slow account looked through for ones of its other watches: all an account can
 * have (100 watches of 20 undelivered events each, store.ts), and a few more.
 */
const PRIORITY_SCAN = 2_100;

/** Due entries one account's pass may read beyond those it claims, dropping the gone ones. */
const LEFTOVER_SCAN = 64;

/** Accounts with events in the outbox that one pass visits at most. */
const ACCOUNTS_PER_PASS = 1_000;

/** Interim (1xx) answers a receiver may send before its final one; a real one sends one or two. */
const MAX_INTERIM = 8;

class TooManyInterim extends Error {
  constructor() {
    super(`the receiver sent more than ${MAX_INTERIM} interim (1xx) answers`);
    this.name = "TooManyInterim";
  }
}
/** Entries of the outbox as kept before it was kept by account, moved per pass. */
const LEGACY_MOVES = 100;

export const DEFAULT_WEBHOOK_TIMING: WebhookTiming = {
  pollMs: 5_000,
  retryMs: 30_000,
  maxDelayMs: 3_600_000,
  giveUpMs: 86_400_000,
  leaseMs: 60_000,
  timeoutMs: 10_000,
  maxInFlight: 50,
  perAccount: 4,
  slowMs: 2_500,
};

/** How long an account stays slow after its last slow failed attempt. */
const SLOW_FOR_MS = 600_000;
/** Accounts remembered as slow (the oldest forgotten first). */
const MAX_SLOW = 10_000;

export interface WebhookOptions {
  allowPrivate: boolean;
  timing?: Partial<WebhookTiming>;
  resolve?: Resolve;
}

export class WebhookDelivery extends PollLoop {
  readonly #kv: Deno.Kv;
  readonly #allowPrivate: boolean;
  readonly #lookup: LookupFunction;
  readonly timing: WebhookTiming;
  readonly #inFlight: InFlight;
  readonly #stopping = new AbortController();
  /** The account the last pass visited last: the next one starts after it. */
  #cursor: string | null = null;
  /** Accounts whose receivers failed slowly, until when. */
  readonly #slow = new Map<string, number>();
  /**
   * Watches whose receivers failed slowly and have not delivered since, until when: a slow
   * account's slot goes to its other watches' events first. A receiver that answers one event at
   * once and hangs on the next is tried in turn with the healthy ones again; it is the account's
   * own receiver, and no account's share of the slots changes with it.
   */
  readonly #slowWatches = new Map<string, number>();
  /** Per account, when each of its attempts under way started. */
  readonly #open = new Map<string, number[]>();

  constructor(kv: Deno.Kv, log: Log, opts: WebhookOptions) {
    const timing = { ...DEFAULT_WEBHOOK_TIMING, ...opts.timing };
    super("webhook delivery", timing.pollMs, log);
    this.#kv = kv;
    this.#allowPrivate = opts.allowPrivate;
    this.#lookup = checkedLookup(opts.resolve);
    this.timing = timing;
    this.#inFlight = new InFlight(timing.maxInFlight, timing.perAccount);
  }

  /**
   * Ends the loop, then waits for the attempts it started: each ends by its timeout, or, past
   * `graceMs`, is cut and noted "interrupted" and retried later like a failed one. A stop's hard
   * deadline (main.ts: DRAIN_SECONDS + 4.5 s) came before an attempt's 10 s timeout, so the process
   * ended mid-attempt and the attempt was never noted on its watch (probe AD).
   */
  override async stop(graceMs = Infinity): Promise<void> {
    await super.stop();
    const cut = Number.isFinite(graceMs)
      ? setTimeout(() => this.#stopping.abort(), Math.max(0, graceMs))
      : undefined;
    await this.#inFlight.idle();
    clearTimeout(cut);
  }

  /**
   * One pass: visits the accounts with events in the outbox in turn and starts the attempts their
   * free slots allow; true when more may be due at once.
   */
  protected async pass(): Promise<boolean> {
    const more = (await moveLegacyOutbox(this.#kv, LEGACY_MOVES)) === LEGACY_MOVES;
    const slots = this.#inFlight;
    if (slots.full()) return more;
    const now = Date.now();
    const seen = new Set<string>();
    let started = 0;
    // From just after the last account visited to the end, then from the start round to it.
    rounds: for (const from of this.#cursor === null ? [null] : [this.#cursor, null]) {
      for await (const { accountId, firstAt } of outboxAccounts(this.#kv, from)) {
        if (seen.has(accountId) || seen.size >= ACCOUNTS_PER_PASS) break rounds;
        seen.add(accountId);
        this.#cursor = accountId;
        const slow = this.#isSlow(accountId, now);
        let free = slots.free(accountId, slow);
        if (firstAt > now || free === 0) continue;
        const start = (d: Delivery) => {
          started++;
          free--;
          slots.run(
            accountId,
            () =>
              this.#attempt(d).catch((e) =>
                this.log.error(`webhook ${d.id} failed in the store`, e)
              ),
            () => this.wake(),
          );
        };
        const lease = this.timing.leaseMs;
        // A slow account's slot goes first to events of its watches that have not failed slowly:
        // taken in due order, a receiver that hangs held the one slot for all the account's
        // others, whose events, each answered at once, fell behind until they were dropped
        // (probe GJ). Which events go first changes no account's share of the slots.
        if (slow) {
          const failing = (watchId: string | undefined) =>
            watchId !== undefined && (this.#slowWatches.get(watchId) ?? 0) > now;
          // Passed over by what their due entries name, unread: however many of them come first
          // (probe GL: 64 read in due order found no other, and the slot went to them again).
          await claimAccountDeliveries(this.#kv, accountId, now, lease, {
            limit: free,
            scan: PRIORITY_SCAN,
            skip: (value) => failing(dueWatchOf(value)),
            want: (d) => !failing(d.watch_id),
          }, start);
        }
        // Past entries whose event is gone (a watch's 21st event drops its oldest, whose entry
        // is dropped when read), as the priority pass reads none of a failing watch's: read at
        // one a pass, they piled up ahead of a healthy watch's events (probe GM, once).
        await claimAccountDeliveries(this.#kv, accountId, now, lease, {
          limit: free,
          scan: free + LEFTOVER_SCAN,
        }, start);
        if (slots.full()) break rounds;
      }
    }
    return more || (started > 0 && !slots.full());
  }

  async #attempt(d: Delivery): Promise<void> {
    const [we, ae] = await this.#kv.getMany<[Watch, AccountState]>([
      KV.watch(d.watch_id),
      KV.account(d.account_id),
    ]);
    const watch = we.value;
    if (!watch) {
      await settleDelivery(this.#kv, d, null, null); // the watch was deleted: its events go with it
      return;
    }
    if (ae.value?.status !== "active") {
      // Inactive or gone: nothing is sent for it, and its queued events do not wait to be.
      await settleDelivery(this.#kv, d, null, {
        event_id: d.id,
        at: new Date().toISOString(),
        attempt: d.attempts,
        result: "dropped: the account is inactive",
        delivered: false,
      });
      return;
    }
    const started = Date.now();
    const open = this.#open.get(d.account_id) ?? [];
    this.#open.set(d.account_id, open);
    open.push(started);
    let result: string;
    try {
      result = await this.#send(watch, d);
    } finally {
      open.splice(open.indexOf(started), 1);
      if (open.length === 0) this.#open.delete(d.account_id);
    }
    const delivered = result.startsWith("delivered");
    const now = Date.now();
    // Not cleared by a delivery: a receiver answering one event at once and hanging on the others
    // got all its slots back each time (probe BN).
    if (!delivered && now - started >= this.timing.slowMs) {
      setBounded(this.#slow, d.account_id, now + SLOW_FOR_MS, MAX_SLOW);
      // Until it delivers (a day at most, as long as an event is tried): marked for 10 minutes,
      // more hanging watches than the one slot could try in that time were never all marked,
      // and those not marked held the slot in turn with the healthy ones (probe GL).
      setBounded(this.#slowWatches, d.watch_id, now + this.timing.giveUpMs, MAX_SLOW);
    } else if (delivered) {
      this.#slowWatches.delete(d.watch_id);
    }
    const giveUp = !delivered && now - d.created_at >= this.timing.giveUpMs;
    const delay = Math.min(this.timing.maxDelayMs, this.timing.retryMs * 2 ** (d.attempts - 1));
    await settleDelivery(this.#kv, d, delivered || giveUp ? null : now + delay, {
      event_id: d.id,
      at: new Date(now).toISOString(),
      attempt: d.attempts,
      result: giveUp ? `${result}; given up after a day` : result,
      delivered,
    });
    if (!delivered) {
      // The host only: a webhook URL may carry a token in its path or query.
      this.log.error(
        `webhook ${d.id} of watch ${d.watch_id} to ${webhookHost(watch.webhook_url)}: ${result}`,
      );
    }
  }

  #isSlow(accountId: string, now: number): boolean {
    if ((this.#open.get(accountId) ?? []).some((at) => now - at >= this.timing.slowMs)) return true;
    const until = this.#slow.get(accountId);
    if (until === undefined) return false;
    if (until > now) return true;
    this.#slow.delete(accountId);
    return false;
  }

  /** "delivered (HTTP 2xx)" or what went wrong, in a few words. */
  async #send(watch: Watch, d: Delivery): Promise<string> {
    const shape = webhookUrlRefusal(watch.webhook_url, this.#allowPrivate);
    if (shape) return `refused: ${shape}`;
    const url = new URL(watch.webhook_url);
    // node:http(s) rather than fetch: fetch resolves the name itself, so a check made before it
    // could be answered differently at the connection (DNS rebinding); node's `lookup` option
    // makes the check the connection's own lookup. Named hosts only: a literal needs none.
    const lookup = shape === undefined ? this.#lookup : undefined;
    const timeout = AbortSignal.timeout(this.timing.timeoutMs);
    const signal = AbortSignal.any([timeout, this.#stopping.signal]);
    const status = await new Promise<number | Error>((done) => {
      const req = (url.protocol === "https:" ? https : http).request(url, {
        method: "POST",
        lookup,
        signal,
        headers: {
          "content-type": "application/json",
          "content-length": String(new TextEncoder().encode(d.body).length),
          "user-agent": "Shelf-Webhooks/1",
          "shelf-event-id": d.id,
          "shelf-signature": signatureHeader(watch.secret, d.body, Math.floor(Date.now() / 1000)),
        },
      }, (res) => {
        done(res.statusCode ?? 0);
        res.destroy(); // the answer's body is not read
      });
      // Interim answers (102 Processing, 100 Continue) do not end a request, and node:http reads
      // them on this thread: a receiver sending them without end kept it busy for the whole
      // timeout, and four such watches stalled every other account's calls for seconds (probe AW).
      let interim = 0;
      req.on("information", () => {
        if (++interim > MAX_INTERIM) req.destroy(new TooManyInterim());
      });
      req.on("error", (e) => done(e));
      req.end(d.body);
    }).catch((e) => (e instanceof Error ? e : new Error(String(e)))); // a request refused outright
    if (typeof status === "number") {
      return status >= 200 && status < 300 ? `delivered (HTTP ${status})` : `HTTP ${status}`;
    }
    if (status instanceof RefusedTarget || status instanceof TooManyInterim) {
      return `refused: ${status.message}`;
    }
    if (this.#stopping.signal.aborted) return "interrupted: the server stopped";
    return timeout.aborted ? "timeout" : `connection failed (${status.name})`;
  }
}
