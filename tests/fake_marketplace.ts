/**
 * A fake marketplace for the tests and the bench: a Deno.serve server on loopback that answers
 * the requests Shelf sends with `UPSTREAM=origin:URL` (the marketplace host in
 * `X-Forwarded-Host`, same path and query) with corpus pages from tests/fixtures.
 *
 * It keeps a session per `session-id` cookie and runs the "Deliver to" flow the way the
 * marketplace does (home page token → pop-over token → address change), showing the session's
 * postcode in every page's `#glow-ingress-line2`. On demand it answers a robot check, a 503, a
 * slow page or a reset connection instead of the next pages, or instead of a random share of
 * all pages (`failRandomly`).
 */
import { canonicalUrl } from "../upstream/canonical_url.ts";
import { fixtureBytes } from "./fixture.ts";
import { decodeHtml } from "../parsers/decode.ts";

export type Failure = "robot" | "soft" | "503" | "429" | "slow" | "reset";

interface Route {
  status: number;
  fixture?: string;
  /** Inline HTML, or the bytes of a page in another charset. */
  html?: string | Uint8Array;
  /** Where the page redirects to instead (absolute or path). */
  location?: string;
  /** Extra response headers (Set-Cookie lines among them). */
  headers?: [string, string][];
}

interface Trouble {
  kind: Failure;
  remaining: number;
  /** Only page paths containing this are affected. */
  path?: string;
}

const FLOW = "/portal-migration/hz/glow/";
const SOFT_PAGE = "blocked/amazon.com__akeel-soft-interstitial-dp.html";
// The saved interstitial's own hidden fields (read off the page).
const SOFT_AMZN = "koOG0J3sSQ5hjQ5HGA7n1g==";
const SOFT_KEYWORDS = "TUGBHH";
const NOT_FOUND_PAGE =
  `<!doctype html><html><head><title>Page Not Found</title></head><body><a href="/ref=cs_404_logo"></a>` +
  `<b>Looking for something?</b> We're sorry. The Web address you entered is not a functioning page on our site.</body></html>`;

export class FakeMarketplace {
  private readonly routes = new Map<string, Route>();
  private readonly troubles: Trouble[] = [];
  private random: { rate: number; kinds: Failure[]; next: () => number } | null = null;
  private readonly locations = new Map<string, string>();
  private readonly bytes = new Map<string, Promise<Uint8Array>>();
  private readonly server: Deno.HttpServer<Deno.NetAddr>;
  private nextSession = 1;

  /** Failures answered so far, by kind (targeted and random alike). */
  readonly injected: Record<Failure, number> = {
    robot: 0,
    soft: 0,
    "503": 0,
    "429": 0,
    slow: 0,
    reset: 0,
  };
  /** Every request received (page and flow), in order. */
  readonly requests: { method: string; host: string; path: string; cookie: string }[] = [];
  /** Milliseconds every page (not the location flow) waits before answering. */
  delayMs = 0;
  /** How long a "slow" failure waits. */
  slowMs = 3_000;
  /** Postcodes the address change refuses. */
  readonly refusedZips = new Set<string>();
  /** When set, pages show this delivery location whatever the session chose. */
  shownLocation: string | null = null;
  /**
   * The location product pages show, while the home page (which the location flow reads) shows
   * the session's own: a marketplace that does not keep a visitor's location from page to page.
   */
  pageLocation: string | null = null;
  /**
   * Steps of the location flow that fail: the home page (before the address change and after),
   * the address selections, or the address change answer `status` the next `times` times (503
   * with a robot page).
   */
  readonly flowFailures: { step: "home" | "modal" | "change"; status: number; times: number }[] =
    [];

  constructor() {
    this.server = Deno.serve(
      { port: 0, hostname: "127.0.0.1", onListen() {} },
      (req) => this.handle(req),
    );
  }

  get origin(): string {
    return `http://127.0.0.1:${this.server.addr.port}`;
  }

  /** The UPSTREAM setting that points Shelf here. */
  get upstream(): string {
    return `origin:${this.origin}`;
  }

  /** Serves a corpus page (or inline HTML) at a marketplace URL. */
  page(
    url: string,
    page:
      | string
      | { html: string | Uint8Array; status?: number; headers?: [string, string][] },
  ): this {
    const route = typeof page === "string"
      ? { status: 200, fixture: page }
      : { status: page.status ?? 200, html: page.html, headers: page.headers };
    this.routes.set(canonicalUrl(url), route);
    return this;
  }

  redirect(url: string, location: string): this {
    this.routes.set(canonicalUrl(url), { status: 302, location });
    return this;
  }

  /** The next `times` page requests (whose path contains `path`, when given) fail this way. */
  fail(kind: Failure, times = 1, path?: string): this {
    this.troubles.push({ kind, remaining: times, path });
    return this;
  }

  /** The failures asked for with fail() that have not happened yet do not. */
  recover(): this {
    this.troubles.length = 0;
    return this;
  }

  /**
   * From now on a share `rate` of page requests (0..1) fails, each with a kind drawn from `kinds`;
   * `next` is the random source (a seeded one makes a run repeatable). Rate 0 turns it off.
   */
  failRandomly(rate: number, kinds: Failure[], next: () => number = Math.random): this {
    this.random = rate > 0 ? { rate, kinds, next } : null;
    return this;
  }

  /** Page requests (not the location flow, not the home page) whose path contains `part`. */
  pageRequests(part = ""): number {
    return this.requests.filter((r) =>
      r.path !== "/" && !r.path.startsWith(FLOW) && r.path.includes(part)
    ).length;
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.server.shutdown();
  }

  private async handle(req: Request): Promise<Response> {
    const url = new URL(req.url);
    const host = req.headers.get("x-forwarded-host") ?? "www.amazon.com";
    const path = url.pathname + url.search;
    const cookie = req.headers.get("cookie") ?? "";
    this.requests.push({ method: req.method, host, path, cookie });

    let session = /(?:^|;\s*)session-id=([^;]+)/.exec(cookie)?.[1];
    // No charset: a corpus page keeps the encoding it declares itself (meta tag, BOM).
    const headers = new Headers({ "content-type": "text/html" });
    if (!session) {
      session = `s${this.nextSession++}`;
      headers.append(
        "set-cookie",
        `session-id=${session}; Path=/; Domain=.${host.replace(/^www\./, "")}; Secure`,
      );
    }

    if (url.pathname.startsWith(FLOW) || url.pathname === "/") {
      const step = url.pathname === "/"
        ? "home"
        : url.pathname.endsWith("/address-change")
        ? "change"
        : "modal";
      const failure = this.flowFailures.find((f) => f.step === step && f.times > 0);
      if (failure) {
        failure.times--;
        const robot = `<html><body><form action="/errors/validateCaptcha"></form></body></html>`;
        return new Response(failure.status === 503 ? robot : "failed", {
          status: failure.status,
          headers,
        });
      }
    }
    if (url.pathname.startsWith(FLOW)) return this.flow(req, url, session, headers);
    if (url.pathname === "/") return this.home(session, headers);
    if (url.pathname === "/errors/validateCaptcha") return this.passInterstitial(url, headers);

    const trouble = this.troubles.find((t) =>
      t.remaining > 0 && (!t.path || path.includes(t.path))
    );
    if (trouble) trouble.remaining--;
    const kind = trouble?.kind ?? this.randomFailure();
    if (kind) {
      this.injected[kind]++;
      const answer = await this.trouble(kind, req.signal, headers, path);
      if (answer) return answer;
    }
    if (this.delayMs) await sleep(this.delayMs);

    const route = this.routes.get(canonicalUrl(`https://${host}${path}`));
    if (!route) return new Response(NOT_FOUND_PAGE, { status: 404, headers });
    for (const [k, v] of route.headers ?? []) headers.append(k, v);
    if (route.location) {
      headers.set("location", route.location);
      return new Response(null, { status: route.status, headers });
    }
    const raw = route.html === undefined
      ? await this.fixture(route.fixture!)
      : typeof route.html === "string"
      ? new TextEncoder().encode(route.html)
      : route.html;
    const body = this.withLocation(raw, session);
    if (body !== raw) headers.set("content-type", "text/html; charset=utf-8");
    return new Response(body as BodyInit, { status: route.status, headers });
  }

  private randomFailure(): Failure | undefined {
    const r = this.random;
    if (!r || r.next() >= r.rate) return undefined;
    return r.kinds[Math.floor(r.next() * r.kinds.length)];
  }

  private async trouble(
    kind: Failure,
    signal: AbortSignal,
    headers: Headers,
    path: string,
  ): Promise<Response | null> {
    switch (kind) {
      case "soft":
        return new Response(await this.softInterstitial(path), { headers });
      case "robot":
        return new Response(
          await this.fixture("blocked/amazon.com__app-robot-check.html") as BodyInit,
          { headers },
        );
      case "503":
        return new Response(
          await this.fixture("blocked/amazon.com__cagan-dogs-of-amazon-503.html") as BodyInit,
          {
            status: 503,
            headers,
          },
        );
      case "429":
        return new Response("Too Many Requests", { status: 429, headers });
      case "slow":
        await sleep(this.slowMs, signal);
        return null;
      case "reset": {
        // Headers go out, then the connection dies mid-body: what a reset looks like to a client.
        const body = new ReadableStream({
          start(c) {
            c.enqueue(new TextEncoder().encode("<html><body>"));
            c.error(new Error("connection reset by fake marketplace"));
          },
        });
        return new Response(body, { headers });
      }
    }
  }

  /**
   * The corpus's soft interstitial, edited in one place: its return path (`amzn-r`) is the page
   * that was asked for instead of the one it was saved for. Its `amzn` and `field-keywords` stay
   * as saved, and passInterstitial checks them.
   */
  private async softInterstitial(path: string): Promise<string> {
    const html = new TextDecoder().decode(await this.fixture(SOFT_PAGE));
    const back = path.replaceAll("&", "&amp;").replaceAll('"', "&quot;");
    return html.replace(/(name="amzn-r" value=")[^"]*/, `$1${back}`);
  }

  /** The interstitial's form: with its own fields, back to the page asked for; else a 403. */
  private passInterstitial(url: URL, headers: Headers): Response {
    const p = url.searchParams;
    const back = p.get("amzn-r") ?? "";
    if (
      p.get("amzn") !== SOFT_AMZN || p.get("field-keywords") !== SOFT_KEYWORDS ||
      !back.startsWith("/")
    ) {
      return new Response("forbidden", { status: 403, headers });
    }
    headers.set("location", back);
    return new Response(null, { status: 302, headers });
  }

  /** The home page: the pop-over's token and the current delivery location. */
  private home(session: string, headers: Headers): Response {
    const modal = JSON.stringify({ ajaxHeaders: { "anti-csrftoken-a2z": `page-${session}` } })
      .replace(/"/g, "&quot;");
    const html =
      `<!doctype html><html><body><span id="nav-global-location-data-modal-action" data-a-modal="${modal}">` +
      `</span><div id="nav-global-location-slot"><span class="nav-line-1" id="glow-ingress-line1">Deliver to</span>` +
      `<span class="nav-line-2" id="glow-ingress-line2">${
        this.shown(session)
      }</span></div></body></html>`;
    return new Response(html, { headers });
  }

  private async flow(req: Request, url: URL, session: string, headers: Headers): Promise<Response> {
    const token = req.headers.get("anti-csrftoken-a2z");
    if (url.pathname.endsWith("/get-rendered-address-selections")) {
      if (token !== `page-${session}`) return new Response("forbidden", { status: 403, headers });
      return new Response(
        `<script>P.when('A').execute(function(){ var CSRF_TOKEN : "modal-${session}"; });</script>`,
        {
          headers,
        },
      );
    }
    if (url.pathname.endsWith("/address-change") && req.method === "POST") {
      if (token !== `modal-${session}`) return new Response("forbidden", { status: 403, headers });
      const body = await req.json().catch(() => ({}));
      const zip = String(body.zipCode ?? "");
      headers.set("content-type", "application/json");
      if (!zip || this.refusedZips.has(zip)) {
        return new Response(JSON.stringify({ isValidAddress: 0 }), { headers });
      }
      this.locations.set(session, zip);
      return new Response(JSON.stringify({ isValidAddress: 1, isAddressUpdated: 1 }), { headers });
    }
    return new Response(NOT_FOUND_PAGE, { status: 404, headers });
  }

  private shown(session: string): string {
    if (this.shownLocation !== null) return this.shownLocation;
    const zip = this.locations.get(session);
    return zip ? `Springfield ${zip}&zwnj;` : "Update location";
  }

  /** A corpus page with the session's delivery location in place of the one it was saved with. */
  private withLocation(raw: Uint8Array, session: string): Uint8Array {
    const latin = new TextDecoder("latin1").decode(
      raw.subarray(0, Math.min(raw.length, 2_000_000)),
    );
    if (!latin.includes("glow-ingress-line2")) return raw;
    const html = decodeHtml(raw);
    const replaced = html.replace(
      /(id=["']glow-ingress-line2["'][^>]*>)[\s\S]*?(<\/span>)/,
      (_, open, close) => `${open}${this.pageLocation ?? this.shown(session)}${close}`,
    );
    return new TextEncoder().encode(replaced);
  }

  private fixture(name: string): Promise<Uint8Array> {
    let p = this.bytes.get(name);
    if (!p) {
      p = fixtureBytes(name);
      this.bytes.set(name, p);
    }
    return p;
  }
}

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const t = setTimeout(resolve, ms);
    signal?.addEventListener("abort", () => {
      clearTimeout(t);
      resolve();
    }, { once: true });
  });
}
