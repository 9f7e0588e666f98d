/**
 * Fetching as a careful browser would (`UPSTREAM=live`), or the very same requests sent to a
 * local fake marketplace (`UPSTREAM=origin:URL`: same path and query, the marketplace host in
 * `X-Forwarded-Host`), so that everything below is exercised by the tests.
 *
 * - a session per (marketplace, postcode): its own cookie jar, its proxy, its delivery location
 *   set once through the marketplace's flow (delivery_location.ts) and reused;
 * - a robot check, captcha, 503 or 429, or a failed connection: the session is dropped, the next
 *   attempt starts a fresh one on the next proxy, after an exponential backoff with jitter;
 * - a timeout is a 504 at once (the caller's time is spent; a retry would double it);
 * - at most `perMarketplace` requests at once per marketplace, identical concurrent requests of
 *   one account sharing one fetch, redirects followed only within the call's marketplace;
 * - a call's deadline starts when it is asked for and covers its wait for a slot; slots go to
 *   the requests' owners (accounts) in turn, and an owner may have at most
 *   WAITING_PER_OWNER requests waiting per marketplace (then 503 `upstream_busy` at once), and
 *   hold all slots but one, so that one account's flood, or its pages that the marketplace
 *   answers slowly, cannot hold up every other account's calls.
 */
import { ApiError } from "../core/api_error.ts";
import type { InterstitialForm } from "../parsers/soft_interstitial.ts";
import { readPage } from "./page_read.ts";
import { navigationHeaders, xhrHeaders } from "./browser_headers.ts";
import { CookieJar } from "./cookie_jar.ts";
import { marketplace } from "../schemas/marketplaces.ts";
import { credentialRelay, type ProxyRelay } from "./proxy_relay.ts";
import {
  applyDeliveryLocation,
  LocationBlocked,
  locationMatches,
  mismatch,
  PostcodeRefused,
  type Send,
  type Sent,
} from "./delivery_location.ts";
import { KeyedLimiter, LimiterFull } from "../core/limiter.ts";
import {
  BodyTooLarge,
  MAX_UPSTREAM_BYTES,
  processReadBudget,
  ReadBudgetSpent,
  readCapped,
} from "./read_capped.ts";
import { metrics } from "../core/metrics.ts";
import { exactMarketplace, NotMarketplaceUrl, upstreamUrl } from "../schemas/marketplace_url.ts";
import { SingleFlight } from "./single_flight.ts";
import { setBounded } from "../core/bounded_map.ts";
import type { Transport, UpstreamRequest, UpstreamResponse } from "./transport.ts";

export interface BrowserOptions {
  /** `origin:` target (http://127.0.0.1:PORT); unset for the marketplaces themselves. */
  origin?: string;
  /**
   * Whether to ask for compressed bodies, which Deno inflates before Shelf reads them: the
   * marketplaces' way (the default without `origin`). An origin is asked for none (see send).
   */
  compressed?: boolean;
  /** One exchange: connect, headers and body. */
  timeoutMs?: number;
  /** One call: every attempt, backoff and body together (issue 13.3). */
  deadlineMs?: number;
  /** Further attempts after a block or a failed connection. */
  retries?: number;
  backoffMs?: number;
  perMarketplace?: number;
  /** Proxy URLs to rotate through, one per session. */
  proxies?: string[];
  /** Marketplace code → `Cookie:` value of an operator's signed-in session. */
  operatorCookies?: Record<string, string>;
  /** Where a line goes for each failed attempt and each retry (main.ts: the ops log). */
  log?: (line: Record<string, unknown>) => void;
  /**
   * Sessions kept (one per marketplace and postcode). Postcodes come from clients, so the session
   * used least lately is forgotten past this many rather than letting memory grow (issue 15.4).
   */
  maxSessions?: number;
  /**
   * Of those, the postcode sessions one account may have been the last to use; past this its new
   * postcode forgets its own least lately used session, not another account's.
   */
  sessionsPerOwner?: number;
  /**
   * How long an account's calls to a marketplace are refused at once after BLOCKED_CALLS of its
   * calls in a row ended blocked through every retry (default 30 s).
   */
  pauseMs?: number;
  /** How long a proxy that took a request and never answered is first passed over. */
  stalledProxyMs?: number;
}

/**
 * Calls in a row that ended blocked after every retry, after which a marketplace's calls pause:
 * while it blocks, each call cost its retries (up to 94 upstream requests for a postcode search,
 * uncharged), which only deepens the block on the operator's addresses. From the first such call
 * on, until a call gets through, that account's calls to that marketplace make one attempt and no
 * retries. Counted per account (see `blockedRuns`).
 */
export const BLOCKED_CALLS = 5;

/** Accounts whose blocked runs are remembered; past this, the oldest is forgotten. */
const MAX_BLOCKED_RUNS = 10_000;

function blockedRunKey(req: UpstreamRequest): string {
  return `${req.marketplace}|${req.owner ?? ""}`;
}

interface Session {
  key: string;
  marketplace: string;
  zip?: string;
  /** The account that used it last: sessions are shared, their share of the cap is the user's. */
  owner: string;
  jar: CookieJar;
  proxy: number;
  located?: Promise<void>;
  /** A copy for a client's URL (a scrape): what befalls it is not the shared session's. */
  client?: boolean;
}

const MAX_REDIRECTS = 5;

/** A session's key: one per marketplace and postcode. */
function sessionKey(code: string, zip?: string): string {
  return `${code}|${zip ?? ""}`;
}

/**
 * Requests one owner (account) may have waiting for a slot of one marketplace, besides those
 * under way; past it a call is refused at once with 503 `upstream_busy` (uncharged), rather than
 * queueing without end in front of everyone else's calls.
 */
export const WAITING_PER_OWNER = 16;
/** How long a refused postcode is answered without asking the marketplace again. */
export const REFUSED_POSTCODE_MS = 15 * 60 * 1000;
/**
 * Postcodes of one account the marketplace may refuse within REFUSED_POSTCODE_MS; past them its
 * calls with a postcode not already located are refused at once. A refused postcode is an
 * uncharged call that ran the 3-request location flow, so made-up postcodes, each new, got that
 * upstream work for free without end.
 */
export const REFUSED_POSTCODES_PER_OWNER = 10;
/** New postcodes one account may have located within REFUSED_POSTCODE_MS, refused or not. */
export const NEW_POSTCODES_PER_OWNER = 50;

interface RecentPostcode {
  zip: string;
  at: number;
  refused: boolean;
  /** Its location did not hold: each flow run for it again counts, as a failed one does. */
  flowsCount?: boolean;
}

export class BrowserTransport implements Transport {
  private readonly sessions = new Map<string, Session>();
  private readonly nextProxy = new Map<string, number>();
  /** Per account: the new postcodes it had located lately, oldest first (a bounded few). */
  private readonly postcodesByOwner = new Map<string, RecentPostcode[]>();
  /** Per account: location flows under way for postcodes it had no session for. */
  private readonly flowsRunning = new Map<string, number>();
  private readonly flights = new SingleFlight<UpstreamResponse>();
  /**
   * Postcodes a marketplace refused (by session key), until when they are answered so without
   * asking again: each try ran the whole location flow (4 upstream requests, and a POST of the
   * client's text to the marketplace's address change) for an uncharged 502, as often as a client
   * liked.
   */
  private readonly refusedPostcodes = new Map<string, number>();
  /**
   * Per account and marketplace (blockedRunKey): calls in a row that ended blocked, and until when
   * new ones are refused. Per account, as any account can make its own calls end blocked (a
   * scrape of a page that is one, say): counted per marketplace, five such calls paused it for
   * every other account, and one more call each time the pause ended kept it paused, for free.
   */
  private readonly blockedRuns = new Map<string, { count: number; until: number }>();
  private readonly limiter: KeyedLimiter;
  private readonly clients: Deno.HttpClient[];
  private readonly o: Required<Omit<BrowserOptions, "origin" | "log">> & { origin?: string };
  private readonly log: (line: Record<string, unknown>) => void;

  constructor(opts: BrowserOptions = {}) {
    this.o = {
      timeoutMs: 20_000,
      deadlineMs: 30_000,
      retries: 3,
      backoffMs: 1_000,
      perMarketplace: 6,
      proxies: [],
      operatorCookies: {},
      maxSessions: 1_000,
      sessionsPerOwner: 100,
      pauseMs: 30_000,
      stalledProxyMs: 60_000,
      ...opts,
      compressed: opts.compressed ?? !opts.origin,
    };
    this.log = opts.log ?? (() => {});
    // One slot is always left to other accounts (see core/limiter.ts).
    const ownSlots = Math.max(1, this.o.perMarketplace - 1);
    this.limiter = new KeyedLimiter(this.o.perMarketplace, WAITING_PER_OWNER, ownSlots);
    // Requests to an https origin or the marketplaces go through a CONNECT tunnel, inside which
    // the runtime would send an http(s) proxy's credentials too: a relay adds them (proxy_relay.ts).
    const origin = this.o.origin ? new URL(this.o.origin) : null;
    const tunnels = !origin || origin.protocol === "https:";
    const allowed = (host: string, port: number) =>
      origin
        ? host === origin.hostname.replace(/^\[|\]$/g, "") && port === (Number(origin.port) || 443)
        : port === 443 && exactMarketplace(host) !== undefined;
    this.clients = this.o.proxies.map((url) => {
      const relay = tunnels ? credentialRelay(url, allowed) : null;
      if (relay) this.relays.push(relay);
      return Deno.createHttpClient({ proxy: { url: relay?.url ?? url } });
    });
  }

  private readonly relays: ProxyRelay[] = [];
  /** The proxy that last answered: a new session starts there, not at a first one that stalls. */
  private lastGoodProxy = 0;
  /**
   * Until when each proxy that took a request and never answered is passed over, and how often
   * it has in a row: each time again twice as long, up to an hour, so that a client meeting one
   * block page after another cannot send every account's calls back to it each minute.
   */
  private readonly stalledUntil: number[] = [];
  private readonly stalls: number[] = [];

  /**
   * The proxy a session of `key` uses next, after `from` (or its last one): the first that has
   * not stalled lately. Moving on by one alone, a call that met a block page moved the session
   * every account shares onto a proxy that never answers, and every call timed out (probe DL).
   */
  private proxyAfter(from: number): number {
    const n = Math.max(1, this.clients.length);
    const now = Date.now();
    for (let i = 1; i <= n; i++) {
      const p = (from + i) % n;
      if (!(this.stalledUntil[p] > now)) return p;
    }
    return (from + 1) % n;
  }

  /** Upstream requests actually sent (not shared, not replayed), for tests and the bench. */
  sent = 0;

  fetch(req: UpstreamRequest): Promise<UpstreamResponse> {
    if (req.zip) {
      const key = sessionKey(req.marketplace, req.zip);
      if (this.#stillRefused(key)) return Promise.reject(new PostcodeRefused(req.zip));
      if (!this.sessions.get(key)?.located) {
        const refusal = this.#postcodeBudgetSpent(req.owner ?? "");
        if (refusal) return Promise.reject(refusal);
      }
    }
    // Shared by one owner's identical requests only: a shared request waits in its first asker's
    // turn, so another account joining it waited behind that account's queue (up to the
    // deadline), with a slot of its own free. Across accounts the result cache shares answers.
    const key = `${req.owner ?? ""}|${req.marketplace}|${req.zip ?? ""}|${req.url}|${
      req.readKey ?? ""
    }`;
    return this.flights.run(key, (signal) => this.limited({ ...req, signal }), req.signal);
  }

  /** Waits for a slot (the owner's turn), then fetches; the deadline counts from the start. */
  private async limited(req: UpstreamRequest): Promise<UpstreamResponse> {
    const runKey = blockedRunKey(req);
    const run = this.blockedRuns.get(runKey);
    if (run && run.count >= BLOCKED_CALLS && run.until > Date.now()) {
      const seconds = Math.max(1, Math.ceil((run.until - Date.now()) / 1000));
      throw new ApiError(
        503,
        "upstream_blocked",
        `The marketplace blocked this account's last ${run.count} calls; its calls to it pause ` +
          `for ${seconds} s.`,
        { "Retry-After": String(seconds) },
      );
    }
    const deadline = AbortSignal.timeout(this.o.deadlineMs);
    const signal = req.signal ? AbortSignal.any([req.signal, deadline]) : deadline;
    try {
      const res = await this.limiter.run(
        req.marketplace,
        (pause) => this.withRetries(req, deadline, signal, pause),
        { owner: req.owner ?? "", signal },
      );
      this.noteBlocked(req, isBlocked(res));
      return res;
    } catch (e) {
      if (e instanceof ApiError && e.code === "upstream_blocked") this.noteBlocked(req, true);
      if (e instanceof LimiterFull) {
        metrics.upstreamFailures.inc({ marketplace: req.marketplace, outcome: "busy" });
        throw new ApiError(
          503,
          "upstream_busy",
          "Too many of this account's calls are waiting for this marketplace; retry in a moment.",
          { "Retry-After": "1" },
        );
      }
      if (!(e instanceof ApiError) && deadline.aborted && !req.signal?.aborted) {
        throw this.timedOut(); // still waiting for a slot when the deadline passed
      }
      throw e;
    }
  }

  /** Counts a call that ended blocked; one that did not ends the run. */
  private noteBlocked(req: UpstreamRequest, blocked: boolean): void {
    const key = blockedRunKey(req);
    if (!blocked) {
      this.blockedRuns.delete(key);
      return;
    }
    const run = this.blockedRuns.get(key) ?? { count: 0, until: 0 };
    run.count++;
    if (run.count >= BLOCKED_CALLS) {
      run.until = Date.now() + this.o.pauseMs;
      this.log({
        event: "upstream_paused",
        marketplace: req.marketplace,
        account: req.owner ?? null,
        calls: run.count,
        ms: this.o.pauseMs,
      });
    }
    setBounded(this.blockedRuns, key, run, MAX_BLOCKED_RUNS);
  }

  private timedOut(): ApiError {
    return new ApiError(
      504,
      "upstream_timeout",
      `The marketplace did not answer within ${this.o.deadlineMs} ms.`,
    );
  }

  close(): Promise<void> {
    for (const c of this.clients) c.close();
    for (const r of this.relays) r.close();
    return Promise.resolve();
  }

  private async withRetries(
    req: UpstreamRequest,
    deadline: AbortSignal,
    signal: AbortSignal,
    /** Waits out of the marketplace slot (see KeyedLimiter.run). */
    pause: <P>(wait: () => Promise<P>) => Promise<P>,
  ): Promise<UpstreamResponse> {
    let lastBlocked: UpstreamResponse | undefined;
    let lastError: unknown;
    let interstitialTried = false;
    // While the marketplace's last call ended blocked, a retry is more load on a block, not a
    // way past it: a fresh session (for a postcode, the location flow again) per attempt.
    const retries = this.blockedRuns.has(blockedRunKey(req)) ? 0 : this.o.retries;
    let clientProxy: number | undefined;
    for (let attempt = 0; attempt <= retries; attempt++) {
      // Out of the slot: other accounts' calls go meanwhile.
      if (attempt > 0) await pause(() => this.backoff(attempt, signal));
      // A client's URL (a scrape) runs on a copy of the shared session: cookies its answers set
      // serve its own redirects and interstitial, and are then thrown away; a block page drops
      // the copy only. On the shared one, a scrape set `lc-main` for every account (probe FJ),
      // and one of a robot check dropped every account's session, the marketplace's renewals of
      // the operator's sign-in with it (probe FL).
      // Its retries, as any call's, each on a fresh session on the next proxy (probe FM: retried
      // on one copy of the same session, a blocked scrape poured into the block).
      const shared = this.session(req.marketplace, req.owner ?? "", req.zip);
      const session: Session = !req.clientUrl ? shared : {
        ...shared,
        client: true,
        jar: attempt === 0 ? shared.jar.copy() : this.#freshJar(req.marketplace, req.zip),
        proxy: attempt === 0 ? shared.proxy : this.proxyAfter(clientProxy ?? shared.proxy),
      };
      clientProxy = session.proxy;
      try {
        if (signal.aborted) throw signal.reason;
        if (req.zip) await this.#located(req, session, signal);
        let res = await this.get(session, req.url, signal, req.owner);
        // One reading of each answer tells a block page, an interstitial and the shown postcode
        // apart: the request's own (on a page worker when there are some, parsed for the
        // caller too), else a bare one here. A 503 or 429 is a block whatever its body says.
        const read = async (r: UpstreamResponse) => {
          if (r.status === 503 || r.status === 429) return;
          r.outcome = req.read ? await untilAborted(req.read(r, signal), signal) : readPage({
            parser: "none",
            url: r.url,
            marketplace: req.marketplace,
            status: r.status,
            contentType: r.headers.get("content-type"),
            wantLocation: !!req.zip,
          }, r.body);
        };
        await read(res);
        // A soft interstitial is passed as a browser passes it: its form, submitted once per
        // call on the same session, leads back to the page asked for.
        const form = !interstitialTried && res.outcome?.interstitial;
        if (form) {
          interstitialTried = true;
          const passed = await this.get(session, formUrl(form, res.url), signal, req.owner);
          await read(passed);
          // A form the marketplace refuses leaves the interstitial as the answer: a block.
          if (passed.status >= 200 && passed.status < 300) res = passed;
        }
        if (isBlocked(res)) {
          lastBlocked = res;
          this.failed(req, attempt, `blocked (HTTP ${res.status})`, attempt < retries);
          this.drop(session);
          continue;
        }
        if (req.zip) {
          const shown = res.outcome?.location ?? null;
          if (shown !== null && !locationMatches(shown, req.zip)) {
            this.drop(session); // located elsewhere since: the next call locates afresh
            // ... and runs the flow again: counted as a flow that failed, each time, against the
            // account's budget of new postcodes. Uncounted, a marketplace that did not keep the
            // location let a client cause 5 upstream requests (an address-change POST among them)
            // per uncharged call without end (probe DT).
            this.#flowsCountEach(req.owner ?? "", req.zip);
            throw mismatch(
              `the page shows delivery to '${shown}' instead of postcode '${req.zip}'.`,
            );
          }
        }
        return res;
      } catch (e) {
        if (deadline.aborted && !req.signal?.aborted) throw this.timedOut();
        if (e instanceof ApiError) {
          this.failed(req, attempt, e.code, false);
          // A proxy that took the request and never answered kept every session on it: each call
          // ran into the same timeout, the next proxy never tried (probe DK).
          // Not for a scrape's copy: its timeout may be the page the client chose, and let any
          // client move every account's session between proxies at will (probe FO); the next
          // call's own timeout moves it off a proxy that stalls.
          if (e.code === "upstream_timeout" && !session.client) {
            // One stall per episode: calls that time out together are one (probe DO: five at
            // once passed a proxy over for 16 minutes).
            const p = session.proxy;
            if (!(this.stalledUntil[p] > Date.now())) {
              const k = (this.stalls[p] = (this.stalls[p] ?? 0) + 1);
              this.stalledUntil[p] = Date.now() +
                Math.min(this.o.stalledProxyMs * 2 ** (k - 1), 3_600_000);
            }
            this.drop(session);
          }
          throw e;
        }
        if (e instanceof LocationBlocked) {
          lastError = e;
          this.failed(
            req,
            attempt,
            e.robot ? "location_blocked" : `location_failed: ${e.message}`,
            attempt < retries,
          );
          this.drop(session);
          continue;
        }
        if (req.signal?.aborted) throw e;
        lastError = e; // connection refused or reset: a fresh session and connection may work
        this.failed(
          req,
          attempt,
          `connection: ${errorText(e).split("\n")[0].slice(0, 120)}`,
          attempt < retries,
        );
        this.drop(session);
      }
    }
    if (lastBlocked) return lastBlocked;
    if (lastError instanceof LocationBlocked) {
      throw lastError.robot
        ? new ApiError(
          503,
          "upstream_blocked",
          "The marketplace kept answering with a robot check.",
        )
        : new ApiError(
          502,
          "upstream_error",
          "The marketplace's delivery-location flow failed; the postcode was not refused.",
        );
    }
    // The cause is in the log (`failed` above); its text may name the operator's files, proxies
    // or addresses, so the client is told only what failed.
    throw new ApiError(502, "upstream_error", "The marketplace connection failed.");
  }

  /** One log line per failed attempt, saying whether a retry follows; counted in the metrics too. */
  private failed(
    req: UpstreamRequest,
    attempt: number,
    outcome: string,
    retry: boolean,
  ): void {
    metrics.upstreamFailures.inc({
      marketplace: req.marketplace,
      outcome: outcome.split(/[ :]/)[0],
    });
    this.log({
      event: retry ? "upstream_retry" : "upstream_failure",
      marketplace: req.marketplace,
      url: req.url,
      outcome,
      attempt: attempt + 1,
    });
  }

  /**
   * The session of a marketplace and postcode, kept in order of last use. Past `maxSessions` a new
   * one forgets the least lately used postcode session, the account's own once it was the last
   * user of `sessionsPerOwner`: forgetting in order of creation let one account's new postcodes
   * (50 per 15 minutes each) push out sessions other accounts used every second, whose next calls
   * then ran the location flow again.
   */
  private session(code: string, owner: string, zip?: string): Session {
    const key = sessionKey(code, zip);
    let s = this.sessions.get(key);
    if (s) {
      this.sessions.delete(key); // to the end: the order is that of last use
    } else {
      const jar = this.#freshJar(code, zip);
      const proxy = this.nextProxy.get(key) ??
        (this.stalledUntil[this.lastGoodProxy] > Date.now()
          ? this.proxyAfter(this.lastGoodProxy)
          : this.lastGoodProxy);
      s = { key, marketplace: code, zip, jar, proxy, owner };
      if (this.sessions.size >= this.o.maxSessions) this.#forgetOne(owner);
    }
    s.owner = owner;
    this.sessions.set(key, s);
    return s;
  }

  /** A new session's cookies: the operator's sign-in, where the session may carry it. */
  #freshJar(code: string, zip?: string): CookieJar {
    const jar = new CookieJar();
    // The operator's session only where no postcode is asked for: "Deliver to" is kept on the
    // account, so a client's postcode run on it would move every other call's location (and the
    // operator's own), the last postcode winning.
    const operator = zip ? undefined : this.o.operatorCookies[code];
    if (operator) jar.seed(operator, marketplace(code).host);
    return jar;
  }

  /**
   * Forgets the least lately used postcode session: the owner's own when it is the last user of
   * its share. A marketplace's session without a postcode (one per marketplace, carrying the
   * operator's sign-in) goes only when there is no other.
   */
  #forgetOne(owner: string): void {
    const share = Math.min(this.o.sessionsPerOwner, this.o.maxSessions);
    let oldest: Session | undefined, oldestOwn: Session | undefined, own = 0;
    for (const s of this.sessions.values()) {
      if (!s.zip) continue;
      oldest ??= s;
      if (s.owner === owner) {
        oldestOwn ??= s;
        own++;
      }
    }
    const gone = (own >= share ? oldestOwn : oldest) ?? this.sessions.values().next().value!;
    this.sessions.delete(gone.key);
    this.nextProxy.delete(gone.key);
  }

  /** Forgets a session the marketplace has flagged; its successor uses the next proxy. */
  private drop(s: Session) {
    // A scrape's copy is no session of the map, and its retries move on by themselves.
    if (s.client) return;
    if (this.sessions.get(s.key) === s) this.sessions.delete(s.key);
    // Bounded like the sessions: each refused postcode left an entry here for good.
    const next = this.proxyAfter(s.proxy);
    setBounded(this.nextProxy, s.key, next, this.o.maxSessions);
  }

  /**
   * The refusal of a location flow for a new postcode of `owner`, or null when it may run one:
   * within REFUSED_POSTCODE_MS, its refused postcodes and its flows under way (a burst of calls
   * all passed a count of refusals alone) may not reach REFUSED_POSTCODES_PER_OWNER, nor its
   * flows started NEW_POSTCODES_PER_OWNER: a flow for a postcode the marketplace accepts, on a
   * call that then fails (an unknown product), was as free as a refused one.
   */
  #postcodeBudgetSpent(owner: string): ApiError | null {
    const recent = this.#recentPostcodes(owner);
    const refused = recent.filter((p) => p.refused);
    const running = this.flowsRunning.get(owner) ?? 0;
    const full = refused.length + running >= REFUSED_POSTCODES_PER_OWNER ||
      recent.length >= NEW_POSTCODES_PER_OWNER;
    if (!full) return null;
    const seconds = recent.length
      ? Math.ceil((recent[0].at + REFUSED_POSTCODE_MS - Date.now()) / 1000)
      : 1;
    return new ApiError(
      502,
      "upstream_error",
      refused.length >= REFUSED_POSTCODES_PER_OWNER
        ? `The marketplace refused this account's last ${refused.length} new postcodes; ` +
          `another new one is tried in ${seconds} s.`
        : recent.length >= NEW_POSTCODES_PER_OWNER
        ? `This account ran the location flow ${recent.length} times for new postcodes in the ` +
          `last 15 minutes; another is run in ${seconds} s.`
        : `This account has ${running} new postcodes being located; another is tried once they are done.`,
      { "Retry-After": String(Math.max(1, seconds)) },
    );
  }

  /** Whether the marketplace refused the postcode of session `key` within REFUSED_POSTCODE_MS. */
  #stillRefused(key: string): boolean {
    const until = this.refusedPostcodes.get(key);
    return until !== undefined && until > Date.now();
  }

  /** The account's new postcodes located within REFUSED_POSTCODE_MS, oldest first. */
  #recentPostcodes(owner: string): RecentPostcode[] {
    const since = Date.now() - REFUSED_POSTCODE_MS;
    const kept = (this.postcodesByOwner.get(owner) ?? []).filter((p) => p.at > since);
    if (kept.length) this.postcodesByOwner.set(owner, kept);
    else this.postcodesByOwner.delete(owner);
    return kept;
  }

  /** From now on each flow for `zip` counts against the owner's budget (see RecentPostcode). */
  #flowsCountEach(owner: string, zip: string): void {
    // Its flow ran over 15 minutes ago, forgotten since: noted now, as this call's.
    if (!this.#recentPostcodes(owner).some((p) => p.zip === zip)) {
      this.#notePostcode(owner, zip, false);
    }
    this.#recentPostcodes(owner).find((p) => p.zip === zip)!.flowsCount = true;
  }

  /** Notes a flow for `zip` (`refused` when it ended so); one postcode counts once. */
  #notePostcode(owner: string, zip: string, refused: boolean, failed = false): void {
    const recent = this.#recentPostcodes(owner);
    const known = recent.find((p) => p.zip === zip);
    // A flow that failed (neither located nor refused) counts each time: it is forgotten, so the
    // next call runs it again, and a postcode whose flow kept failing was located for free
    // without end (probe BK: 117 address changes from 40 calls, none counted).
    if (known && !failed && !known.flowsCount) known.refused ||= refused;
    else recent.push({ zip, at: Date.now(), refused });
    setBounded(this.postcodesByOwner, owner, recent.slice(-NEW_POSTCODES_PER_OWNER), 10_000);
  }

  /**
   * Waits for the session's location, starting the flow when it has none, within the owner's
   * budget of new postcodes (checked again here: calls that arrived together all passed fetch(),
   * and a postcode refused while a call waited for its slot is not tried again).
   */
  async #located(req: UpstreamRequest, s: Session, signal: AbortSignal): Promise<void> {
    if (s.located) return await untilAborted(s.located, signal);
    if (this.#stillRefused(s.key)) throw new PostcodeRefused(s.zip!);
    const owner = req.owner ?? "";
    const spent = this.#postcodeBudgetSpent(owner);
    if (spent) throw spent;
    this.flowsRunning.set(owner, (this.flowsRunning.get(owner) ?? 0) + 1);
    let refused = false;
    let failed = false;
    try {
      await untilAborted(this.locate(s), signal);
    } catch (e) {
      refused = e instanceof PostcodeRefused;
      failed = !refused;
      throw e;
    } finally {
      const left = (this.flowsRunning.get(owner) ?? 1) - 1;
      if (left > 0) this.flowsRunning.set(owner, left);
      else this.flowsRunning.delete(owner);
      this.#notePostcode(owner, s.zip!, refused, failed);
    }
  }

  private locate(s: Session): Promise<void> {
    if (!s.located) {
      s.located = applyDeliveryLocation(this.sender(s), s.marketplace, s.zip!).catch((e) => {
        if (e instanceof PostcodeRefused) {
          setBounded(this.refusedPostcodes, s.key, Date.now() + REFUSED_POSTCODE_MS, 1_000);
          this.drop(s);
        }
        throw e;
      });
      // A failed flow is not reused: the next request on this session tries again.
      s.located.catch(() => (s.located = undefined));
    }
    return s.located;
  }

  private async get(
    s: Session,
    url: string,
    signal?: AbortSignal,
    owner?: string,
  ): Promise<UpstreamResponse> {
    let current = url;
    for (let hop = 0; hop <= MAX_REDIRECTS; hop++) {
      const res = await this.send(s, current, { signal, owner });
      const location = res.headers.get("location");
      if (res.status >= 300 && res.status < 400 && location) {
        let next;
        try {
          next = upstreamUrl(location, current);
        } catch (e) {
          if (!(e instanceof NotMarketplaceUrl)) throw e;
          throw new ApiError(
            502,
            "upstream_error",
            "The marketplace redirected off its own hosts.",
          );
        }
        // Another marketplace's page would be answered as this one's: its prices, its currency.
        if (next.marketplace.code !== s.marketplace) {
          throw new ApiError(
            502,
            "upstream_error",
            `The marketplace redirected to another marketplace (${next.url.host}).`,
          );
        }
        current = next.url.href;
        continue;
      }
      // Signed in only where the operator's session was sent (see session_paths.ts).
      const { signedIn, ...answer } = res;
      return { url: current, ...answer, authenticated: signedIn === true };
    }
    throw new ApiError(
      502,
      "upstream_error",
      `The marketplace redirected more than ${MAX_REDIRECTS} times for ${url}.`,
    );
  }

  /** When each marketplace's signed-out session was last logged. */
  readonly #signedOutLogged = new Map<string, number>();

  /**
   * The operator learns here that a marketplace signed their session out, not from reviews
   * quietly read signed out from now on; once in 10 minutes per marketplace, as every call of a
   * signed-out session tells it again.
   */
  #noteSignedOut(marketplace: string): void {
    const last = this.#signedOutLogged.get(marketplace) ?? -Infinity;
    if (Date.now() - last < 600_000) return;
    this.#signedOutLogged.set(marketplace, Date.now());
    this.log({ event: "upstream_signed_out", marketplace });
  }

  private sender(s: Session): Send {
    return (url, init) => this.send(s, url, init);
  }

  /** One HTTP exchange of a session: headers, cookies, proxy, timeout, origin rewrite. */
  private async send(
    s: Session,
    url: string,
    init: Parameters<Send>[1] & { signal?: AbortSignal; owner?: string },
  ): Promise<Sent> {
    // Every exchange, whoever built its URL, is to a marketplace host or not at all.
    let target: URL;
    try {
      target = upstreamUrl(url).url;
    } catch (e) {
      if (!(e instanceof NotMarketplaceUrl)) throw e;
      throw new ApiError(502, "upstream_error", "Shelf only sends requests to marketplace hosts.");
    }
    const headers = new Headers(
      init.xhr ? xhrHeaders(s.marketplace) : navigationHeaders(s.marketplace),
    );
    for (const [k, v] of Object.entries(init.headers ?? {})) headers.set(k, v);
    const cookie = s.jar.header(target);
    if (cookie) headers.set("cookie", cookie);
    const signedIn = s.jar.signedIn(target);
    let fetchUrl = target.href;
    if (this.o.origin) {
      // Path and query are set on the origin, not resolved against it: `//host/x` stays a path.
      const local = new URL(this.o.origin);
      local.pathname = target.pathname;
      local.search = target.search;
      fetchUrl = local.href;
      headers.set("x-forwarded-host", target.host);
      headers.set("x-forwarded-proto", target.protocol.replace(":", ""));
      // Deno inflates a gzip body before Shelf sees it, and keeps a gzip header's name or comment
      // field whole until it ends: an origin whose field never ended took a process to 8 GB in
      // 20 s, and past a 1.5 GiB limit in 1.3 s (probe AO). Only `identity` turns the inflating
      // off; an origin (a mirror, a test double) needs no compression on its own network. Live
      // pages come over TLS from the marketplace itself, and stay compressed.
      if (!this.o.compressed) headers.set("accept-encoding", "identity");
    }
    // Refused before the request, not halfway through the body: the marketplace is not asked for
    // a page that could not be read (two thirds of one account's requests were, at 90 at once).
    const owner = init.owner ?? s.owner;
    if (processReadBudget.spent(owner)) throw new ReadBudgetSpent();
    const timeout = AbortSignal.timeout(this.o.timeoutMs);
    const signal = init.signal ? AbortSignal.any([init.signal, timeout]) : timeout;
    this.sent++;
    try {
      const res = await fetch(
        fetchUrl,
        {
          method: init.method ?? "GET",
          body: init.body,
          headers,
          redirect: "manual",
          signal,
          client: this.clients[s.proxy],
        } as RequestInit & { client?: Deno.HttpClient },
      );
      s.jar.store(res.headers, target);
      // Not for a scrape's copy: its page's cookies end no session but its own (probe FM).
      if (signedIn && !s.client && !s.jar.signedIn(target)) this.#noteSignedOut(s.marketplace);
      const encoding = res.headers.get("content-encoding");
      if (
        this.o.origin && !this.o.compressed && encoding && encoding.toLowerCase() !== "identity"
      ) {
        await res.body?.cancel().catch(() => {});
        throw new ApiError(
          502,
          "upstream_error",
          "The upstream origin sent an encoded body, though Shelf asked for none.",
        );
      }
      const body = await readCapped(res.body, MAX_UPSTREAM_BYTES, owner);
      // The page's own account link says whether the session still counts: the marketplace may
      // sign it out while keeping cookies the request sent (probe EH: reviews said
      // `authenticated: true`, filters applied, on signed-out pages).
      const shownSignedOut = signedIn && showsSignedOut(body);
      if (shownSignedOut && !s.client) this.#noteSignedOut(s.marketplace);
      metrics.upstreamRequests.inc({
        marketplace: s.marketplace,
        outcome: res.status < 400 ? "ok" : `http_${res.status}`,
      });
      // A proxy that answers is one again, whatever it did before.
      this.lastGoodProxy = s.proxy;
      this.stalls[s.proxy] = 0;
      this.stalledUntil[s.proxy] = 0;
      return {
        status: res.status,
        headers: res.headers,
        body,
        signedIn: !shownSignedOut && signedIn,
      };
    } catch (e) {
      metrics.upstreamRequests.inc({
        marketplace: s.marketplace,
        outcome: timeout.aborted
          ? "timeout"
          : e instanceof BodyTooLarge
          ? "too_large"
          : e instanceof ApiError
          ? "refused"
          : "error",
      });
      if (timeout.aborted) {
        throw new ApiError(
          504,
          "upstream_timeout",
          `The marketplace did not answer within ${this.o.timeoutMs} ms.`,
        );
      }
      throw e;
    }
  }

  private backoff(attempt: number, signal: AbortSignal): Promise<void> {
    const base = this.o.backoffMs * 2 ** (attempt - 1);
    const ms = base / 2 + Math.random() * base / 2;
    // Ends early when the call's deadline passes; the next attempt then fails at once.
    return new Promise<void>((resolve) => {
      const done = () => {
        clearTimeout(timer);
        signal.removeEventListener("abort", done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      signal.addEventListener("abort", done, { once: true });
    });
  }
}

/** The GET the interstitial's form sends: its action on the page's host, its fields as query. */
function formUrl(form: InterstitialForm, pageUrl: string): string {
  const url = new URL(form.action, pageUrl);
  url.search = "";
  for (const [name, value] of form.fields) url.searchParams.append(name, value);
  return url.href;
}

/** Robot check, captcha, throttling: worth a fresh session. A sign-in wall is not. */
function isBlocked(res: UpstreamResponse): boolean {
  if (res.status === 503 || res.status === 429) return true;
  const d = res.outcome?.detection;
  return d?.kind === "blocked" && d.reason !== "signin_wall";
}

/** `p`, or a rejection as soon as `signal` aborts (the work itself may go on for others). */
function untilAborted<T>(p: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<T>((resolve, reject) => {
    const stop = () => reject(signal.reason);
    signal.addEventListener("abort", stop, { once: true });
    p.then(resolve, reject).finally(() => signal.removeEventListener("abort", stop));
  });
}

function errorText(e: unknown): string {
  return e instanceof Error ? e.message : String(e ?? "unknown error");
}

/**
 * A page whose account link is the sign-in one (`data-csa-c-content-id="nav_ya_signin"` on the
 * 40 corpus pages greeting a visitor, `nav_youraccount_btn` on the 8 signed in; older layouts
 * carry neither, and count as the cookies say), looked for where the navigation bar is: in the
 * first MiB.
 */
function showsSignedOut(body: Uint8Array): boolean {
  return latin1.decode(body.subarray(0, 1 << 20)).includes(
    'data-csa-c-content-id="nav_ya_signin"',
  );
}

const latin1 = new TextDecoder("latin1");
